import type { Page } from "playwright-core";
import type { Logger } from "../../shared/log/logger.ts";
import { clickFirst, firstVisible, waitUntil } from "./page-actions.ts";
import { ACTION_SELECTORS } from "./signals.ts";
import { withUiTurn } from "./ui-turn.ts";

export interface ControlResult {
  ok: boolean;
  /** Which selector or key did it, for the log. */
  signal: string | null;
}

/**
 * Leaves the call (hang-up button) or the lobby (its cancel button). Never throws: leaving is
 * best effort on the way out, and closing the browser ends the call anyway.
 */
export async function leaveMeeting(page: Page, logger: Logger): Promise<ControlResult> {
  if (page.isClosed()) return { ok: false, signal: null };
  const signal = (await clickFirst(page, ACTION_SELECTORS.hangup)) ?? (await clickFirst(page, ACTION_SELECTORS.lobbyCancel));
  if (!signal) {
    logger.warn("teams: no leave button found");
    return { ok: false, signal: null };
  }
  const gone = await waitUntil(async () => (await firstVisible(page, ACTION_SELECTORS.hangup)) === null, 5000);
  logger.info({ signal, confirmed: gone }, "teams: left the meeting");
  return { ok: gone, signal };
}

/** Muted per the in-call mic button's label ("Unmute mic" = muted); null when unreadable. */
async function readMuted(page: Page): Promise<{ muted: boolean | null; selector: string | null }> {
  const hit = await firstVisible(page, ACTION_SELECTORS.micButton);
  if (!hit) return { muted: null, selector: null };
  const label = (await hit.locator.getAttribute("aria-label", { timeout: 1000 }).catch(() => null)) ?? "";
  if (/^unmute/i.test(label)) return { muted: true, selector: hit.selector };
  if (/^mute/i.test(label)) return { muted: false, selector: hit.selector };
  return { muted: null, selector: hit.selector };
}

/** Mutes or unmutes the bot in the call: mic button first, Ctrl+Shift+M when there is none. */
export function setMicMuted(page: Page, muted: boolean, logger: Logger): Promise<ControlResult> {
  return withUiTurn(page, () => switchMic(page, muted, logger));
}

async function switchMic(page: Page, muted: boolean, logger: Logger): Promise<ControlResult> {
  const before = await readMuted(page);
  if (before.muted === muted) return { ok: true, signal: before.selector };
  let signal: string | null = null;
  if (before.selector) signal = await clickFirst(page, [before.selector]);
  if (!signal) {
    await page.keyboard.press("Control+Shift+M").catch(() => undefined);
    signal = "key:Control+Shift+M";
  }
  const ok = await waitUntil(async () => (await readMuted(page)).muted === muted, 3000);
  if (ok) logger.info({ muted, signal }, "teams: microphone switched");
  else logger.warn({ muted, signal }, "teams: could not confirm the microphone state");
  return { ok, signal };
}
