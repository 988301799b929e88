import type { Page } from "playwright-core";
import type { Logger } from "../../shared/log/logger.ts";
import { blockedMessage } from "./messages.ts";
import { clickFirst, pause } from "./page-actions.ts";
import { badgeCount, classify, probePage, type Probe } from "./probe.ts";
import { ACTION_SELECTORS } from "./signals.ts";
import { withUiTurn } from "./ui-turn.ts";

export type WatchResult = "alone" | "removed" | "meeting_ended" | { error: string };

export interface WatchOptions {
  logger: Logger;
  signal?: AbortSignal;
  /** recorder-bot.md Limits: one check per second. */
  intervalMs?: number;
  /** recorder-bot.md Limits: alone for five consecutive checks. */
  aloneChecks?: number;
  /** Told whenever the participant count changes (null: unknown), e.g. for `participant_count`. */
  onParticipants?: (count: number | null, signal: string | null) => void;
}

/** The call view gone this many checks in a row, with no known end screen, is an error. */
const LOST_CHECKS = 30;

function participantCount(probe: Probe): { count: number | null; signal: string | null } {
  const fromBadge = badgeCount(probe.badge);
  if (fromBadge !== null) return { count: fromBadge, signal: "badge" };
  if (probe.rosterRows !== null && probe.rosterRows > 0) return { count: probe.rosterRows, signal: "roster" };
  if (probe.onlyOne) return { count: 1, signal: "text:only-one-here" };
  // A missing badge is unknown, never "alone" (teams-dom.md §11).
  return { count: null, signal: null };
}

/**
 * Watches the call until the bot is alone, removed, or the meeting ends. Throws the signal's
 * reason on abort (the caller stopping the session).
 */
export async function watchCall(page: Page, opts: WatchOptions): Promise<WatchResult> {
  const { logger, signal } = opts;
  const intervalMs = opts.intervalMs ?? 1000;
  const aloneChecks = opts.aloneChecks ?? 5;
  let alone = 0;
  let lost = 0;
  let lastCount: number | null | undefined;
  let rosterTried = false;

  for (;;) {
    signal?.throwIfAborted();
    let probe: Probe;
    try {
      probe = await probePage(page);
    } catch (err) {
      return { error: `The browser page failed during the call (${(err as Error).message}).` };
    }
    const { screen, signal: fired } = classify(probe);
    if (screen === "removed") {
      logger.info({ signal: fired }, "teams: removed from the meeting");
      return "removed";
    }
    if (screen === "ended") {
      logger.info({ signal: fired }, "teams: meeting ended");
      return "meeting_ended";
    }
    // "We couldn't connect you" (or another refusal) where the call was: the call is gone, and no
    // call view will come back to wait for.
    const broken = blockedMessage(screen, "call");
    if (broken) {
      logger.warn({ screen, signal: fired }, "teams: the call broke off");
      return { error: broken };
    }
    // A lobby text outranks the call view (signals.ts) so that nobody counts as admitted too
    // early; once in the call, the call's own controls keep telling that the bot is still in it.
    const inCall = screen === "in_call" || (screen === "lobby" && probe.fired.in_call !== undefined);
    lost = inCall ? 0 : lost + 1;
    if (lost >= LOST_CHECKS) return { error: `The call view disappeared (Teams shows: ${screen}).` };

    if (inCall && probe.fired.modal) {
      // §2: the audio/video dialog may come back after "Join now", over the call; it would
      // swallow the roster click below.
      const dismissed = await withUiTurn(page, () => clickFirst(page, ACTION_SELECTORS.modalContinue));
      if (dismissed) logger.info({ signal: dismissed }, "teams: dismissed the audio/video dialog in the call");
    }

    const counted = participantCount(probe);
    const countSignal = counted.signal;
    const count = inCall ? counted.count : null;
    if (count === null && inCall && !rosterTried) {
      // No badge: open the roster once and count its rows from the next check on.
      rosterTried = true;
      const clicked = await withUiTurn(page, () => clickFirst(page, ACTION_SELECTORS.roster));
      logger.info({ signal: clicked }, "teams: no participant badge, opened the roster");
    }
    if (count !== lastCount) {
      logger.info({ count, signal: countSignal }, "teams: participant count");
      opts.onParticipants?.(count, countSignal);
      lastCount = count;
    }
    alone = count !== null && count <= 1 ? alone + 1 : 0;
    if (alone >= aloneChecks) {
      logger.info({ checks: alone }, "teams: alone in the meeting");
      return "alone";
    }
    await pause(intervalMs, signal);
  }
}
