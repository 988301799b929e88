import type { Locator, Page } from "playwright-core";
import type { Logger } from "../../shared/log/logger.ts";
import type { ControlResult } from "./controls.ts";
import { CLICK_TIMEOUT_MS, clickFirst, pause } from "./page-actions.ts";
import { ACTION_SELECTORS } from "./signals.ts";
import { withUiTurn } from "./ui-turn.ts";

/** The menu may lose to a re-render of the call view; a few tries, a second apart. */
const ATTEMPTS = 3;
const RETRY_PAUSE_MS = 1000;
/** A menu opened by a click renders a moment later, long after on a loaded box: waited for, not sampled. */
const MENU_WAIT_MS = 3000;

const TURN_OFF = /turn off incoming video/i;
/** Teams lists it under More, on some builds under More → View. */
const VIEW = /^\s*view\s*$/i;

async function clickIfVisible(l: Locator): Promise<boolean> {
  if (!(await l.first().isVisible().catch(() => false))) return false;
  return l.first().click({ timeout: CLICK_TIMEOUT_MS }).then(() => true, () => false);
}

/**
 * Teams' own "Turn off incoming video" (teams-dom.md "Incoming video"): the service then stops
 * sending participants' video to the bot. Roles and texts only (no data-tid is known). Best
 * effort: when the page does not offer it, the browser's video guard (worker/browser/video-guard.ts)
 * still keeps video from being received. Takes its UI turn like every menu walk.
 */
export async function turnOffIncomingVideo(page: Page, logger: Logger, signal?: AbortSignal): Promise<ControlResult> {
  let result: ControlResult = { ok: false, signal: null };
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    if (attempt > 1) await pause(RETRY_PAUSE_MS, signal);
    result = await withUiTurn(page, () => walk(page));
    if (result.ok || result.signal === null) break;
  }
  if (result.ok) logger.info({ signal: result.signal }, "teams: incoming video turned off");
  else logger.info({ signal: result.signal }, "teams: the page offers no \"Turn off incoming video\"; the browser's video guard holds");
  return result;
}

async function walk(page: Page): Promise<ControlResult> {
  const more = await clickFirst(page, ACTION_SELECTORS.more);
  if (!more) return { ok: false, signal: null };
  const item = page.getByRole("menuitem", { name: TURN_OFF });
  await page.getByRole("menu").first().waitFor({ state: "visible", timeout: MENU_WAIT_MS }).catch(() => undefined);
  let path = more;
  let ok = await clickIfVisible(item);
  if (!ok && (await clickIfVisible(page.getByRole("menuitem", { name: VIEW })))) {
    path += " > menuitem:View";
    await item.first().waitFor({ state: "visible", timeout: MENU_WAIT_MS }).catch(() => undefined);
    ok = await clickIfVisible(item);
  }
  if (!ok) await page.keyboard.press("Escape").catch(() => undefined);
  return { ok, signal: `${path} > ${ok ? "menuitem:Turn off incoming video" : "not offered"}` };
}
