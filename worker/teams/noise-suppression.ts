import type { Locator, Page } from "playwright-core";
import type { Logger } from "../../shared/log/logger.ts";
import type { ControlResult } from "./controls.ts";
import { CLICK_TIMEOUT_MS, clickFirst, pause, waitUntil } from "./page-actions.ts";
import { ACTION_SELECTORS } from "./signals.ts";
import { withUiTurn } from "./ui-turn.ts";

/** A menu walk can lose to a re-render of the call view; a few tries, a second apart. */
const ATTEMPTS = 3;
const RETRY_PAUSE_MS = 1000;

const NS = /noise suppression/i;
const OFF = /^\s*off\s*$/i;

async function visible(l: Locator): Promise<boolean> {
  return l.first().isVisible().catch(() => false);
}

async function clickIfVisible(l: Locator): Promise<boolean> {
  if (!(await visible(l))) return false;
  return l.first().click({ timeout: CLICK_TIMEOUT_MS }).then(() => true, () => false);
}

/** The "Off" choice of a visible noise-suppression control, whichever shape Teams gives it. */
async function chooseOff(page: Page): Promise<string | null> {
  const group = page.getByRole("radiogroup", { name: NS });
  if (await clickIfVisible(group.getByRole("radio", { name: OFF }))) return "radiogroup:radio";
  if (await clickIfVisible(page.getByRole("menuitemradio", { name: OFF }))) return "menuitemradio";
  const select = page.locator("select").filter({ has: page.locator("option", { hasText: OFF }) });
  if (await visible(select)) {
    const ok = await select.first().selectOption({ label: "Off" }, { timeout: CLICK_TIMEOUT_MS }).then(() => true, () => false);
    if (ok) return "select";
  }
  if (await clickIfVisible(page.getByRole("option", { name: OFF }))) return "option";
  return null;
}

async function offChecked(page: Page): Promise<boolean> {
  const checked = page.locator('[role="radio"][aria-checked="true"], [role="menuitemradio"][aria-checked="true"]');
  const texts = await checked.allTextContents().catch(() => []);
  return texts.some((t) => OFF.test(t));
}

/**
 * Switches Teams' noise suppression off (More → "Noise suppression" or More → "Audio settings"),
 * so played audio reaches the meeting unfiltered. Teams has no documented selector for this
 * (teams-dom.md §12), hence roles and texts only. Best effort: reports rather than throws, and
 * takes its UI turn so a concurrent mic click cannot close the menu under it.
 */
export async function disableNoiseSuppression(page: Page, logger: Logger, signal?: AbortSignal): Promise<ControlResult> {
  let result: ControlResult = { ok: false, signal: null };
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    if (attempt > 1) await pause(RETRY_PAUSE_MS, signal);
    result = await withUiTurn(page, () => walkToOff(page));
    if (result.ok || result.signal === null) break;
    logger.debug({ attempt, signal: result.signal }, "teams: noise suppression not switched yet");
  }
  if (result.ok) logger.info({ signal: result.signal }, "teams: noise suppression off");
  else if (result.signal === null) logger.warn("teams: no More button, noise suppression left as is");
  else logger.warn({ signal: result.signal }, "teams: could not switch noise suppression off");
  return result;
}

async function walkToOff(page: Page): Promise<ControlResult> {
  const more = await clickFirst(page, ACTION_SELECTORS.more);
  if (!more) return { ok: false, signal: null };
  let path = more;
  if (await clickIfVisible(page.getByRole("menuitem", { name: NS }))) path += " > menuitem:Noise suppression";
  else if (await clickIfVisible(page.getByRole("menuitem", { name: /audio settings/i }))) path += " > menuitem:Audio settings";
  else if (await clickIfVisible(page.getByRole("menuitem", { name: /^settings$/i }))) {
    path += " > menuitem:Settings";
    if (await clickIfVisible(page.getByRole("menuitem", { name: /device settings/i }))) path += " > Device settings";
  }
  let chosen: string | null = null;
  await waitUntil(async () => (chosen = await chooseOff(page)) !== null, 3000, 250);
  const ok = chosen !== null && (await waitUntil(() => offChecked(page), 2000).catch(() => false));
  await clickIfVisible(page.getByRole("button", { name: /^close$/i }));
  await page.keyboard.press("Escape").catch(() => undefined);
  return { ok, signal: `${path} > ${chosen ?? "no Off choice"}` };
}
