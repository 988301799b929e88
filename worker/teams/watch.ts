import type { Page } from "playwright-core";
import type { Logger } from "../../shared/log/logger.ts";
import type { StepSink } from "../evidence/steps.ts";
import type { ConversationEndWatch } from "./conversation-end.ts";
import { blockedReason, type Blocked } from "./messages.ts";
import { clickFirst, pause } from "./page-actions.ts";
import { badgeCount, classify, probePage, type Probe } from "./probe.ts";
import { ACTION_SELECTORS } from "./signals.ts";
import { withUiTurn } from "./ui-turn.ts";

export type WatchResult = "alone" | "removed" | "meeting_ended" | "only_bots" | { error: string; code: Blocked["code"] };

export interface WatchOptions {
  logger: Logger;
  signal?: AbortSignal;
  /** recorder-bot.md Limits: one check per second. */
  intervalMs?: number;
  /** recorder-bot.md Limits: alone for five consecutive checks. */
  aloneChecks?: number;
  /** Told whenever the participant count changes (null: unknown), e.g. for `participant_count`. */
  onParticipants?: (count: number | null, signal: string | null) => void;
  ends?: ConversationEndWatch;
  steps?: StepSink;
  /** automatic_leave.bot_names: only the bot and participants whose names contain one of these → `only_bots`. */
  botNames?: readonly string[];
  /** The bot's own display name, to leave it out of the roster's names. */
  displayName?: string;
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
 * automatic_leave.bot_names (#16): true when the roster lists someone besides the bot and every
 * such participant's name contains one of `botNames` (case-insensitive). The roster must list as
 * many rows as the badge counts, or a row not rendered yet could be a person.
 */
export function onlyBotsLeft(probe: Probe, botNames: readonly string[], displayName: string | undefined): boolean {
  if (botNames.length === 0 || !probe.rosterNames || probe.rosterNames.length === 0) return false;
  const count = badgeCount(probe.badge);
  if (count !== null && count !== probe.rosterNames.length) return false;
  const others = [...probe.rosterNames];
  const own = displayName?.trim().toLowerCase();
  const mine = others.findIndex((n) => n.toLowerCase() === own || /\(you\)|\(me\)/i.test(n));
  if (mine >= 0) others.splice(mine, 1);
  const needles = botNames.map((b) => b.toLowerCase());
  return others.length > 0 && others.every((n) => needles.some((b) => n.toLowerCase().includes(b)));
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
  let onlyBots = 0;
  const botNames = opts.botNames ?? [];

  for (;;) {
    signal?.throwIfAborted();
    let probe: Probe;
    try {
      probe = await probePage(page);
    } catch (err) {
      return { code: page.isClosed() ? "browser_crashed" : "internal", error: `The browser page failed during the call (${(err as Error).message}).` };
    }
    const { screen, signal: fired } = classify(probe);
    const ended = opts.ends?.latest();
    if (ended) {
      opts.steps?.step("conversation_end", { screen, signal: `ws:conversationEnd subCode=${ended.subCode ?? "none"}` });
      logger.info({ kind: ended.kind, sub_code: ended.subCode, sender: ended.sender }, "teams: the call ended by the signalling WebSocket");
      if (ended.kind === "anonymous_join_disabled") {
        const b = blockedReason("anon_disabled", "call")!;
        return { code: b.code, error: b.message };
      }
      return ended.kind === "ended" ? "meeting_ended" : "removed";
    }
    if (screen === "removed") {
      logger.info({ signal: fired }, "teams: removed from the meeting");
      opts.steps?.step("removed", { screen, signal: fired });
      return "removed";
    }
    if (screen === "ended") {
      logger.info({ signal: fired }, "teams: meeting ended");
      opts.steps?.step("meeting_ended", { screen, signal: fired });
      return "meeting_ended";
    }
    // "We couldn't connect you" (or another refusal) where the call was: the call is gone, and no
    // call view will come back to wait for.
    const broken = blockedReason(screen, "call");
    if (broken) {
      logger.warn({ screen, signal: fired }, "teams: the call broke off");
      opts.steps?.step("call_broken", { screen, signal: fired });
      return { code: broken.code, error: broken.message };
    }
    // A lobby text outranks the call view (signals.ts) so that nobody counts as admitted too
    // early; once in the call, the call's own controls keep telling that the bot is still in it.
    // A screen share hides the toolbar: the call goes on while any other in-call signal holds
    // (the stage, its tiles, the call controls still in the page, hidden).
    const inCall =
      screen === "in_call" || probe.fired.in_call !== undefined || probe.fired.call_hint !== undefined || (probe.callInDom && screen !== "retry_screen");
    lost = inCall ? 0 : lost + 1;
    if (lost >= LOST_CHECKS) return { code: "unexpected_page", error: `The call view disappeared (Teams shows: ${screen}).` };

    if (inCall && probe.fired.modal) {
      // §2: the audio/video dialog may come back after "Join now", over the call; it would
      // swallow the roster click below.
      const dismissed = await withUiTurn(page, () => clickFirst(page, ACTION_SELECTORS.modalContinue));
      if (dismissed) logger.info({ signal: dismissed }, "teams: dismissed the audio/video dialog in the call");
    }

    const counted = participantCount(probe);
    const countSignal = counted.signal;
    const count = inCall ? counted.count : null;
    if ((count === null || (botNames.length > 0 && probe.rosterNames === null)) && inCall && !rosterTried) {
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
    onlyBots = inCall && onlyBotsLeft(probe, botNames, opts.displayName) ? onlyBots + 1 : 0;
    if (onlyBots >= aloneChecks) {
      logger.info({ checks: onlyBots }, "teams: only bots left in the meeting");
      opts.steps?.step("only_bots", { signal: "roster" });
      return "only_bots";
    }
    alone = count !== null && count <= 1 ? alone + 1 : 0;
    if (alone >= aloneChecks) {
      logger.info({ checks: alone }, "teams: alone in the meeting");
      opts.steps?.step("alone", { signal: countSignal });
      return "alone";
    }
    await pause(intervalMs, signal);
  }
}
