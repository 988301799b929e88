import type { Page } from "playwright-core";
import type { Logger } from "../../shared/log/logger.ts";
import type { StepSink } from "../evidence/steps.ts";
import type { ConversationEndWatch } from "./conversation-end.ts";
import { blockedReason, RETRY_SCREEN_MESSAGE, RETRY_SCREEN_MS, type Blocked } from "./messages.ts";
import { clickFirst, pause } from "./page-actions.ts";
import { classify, probePage } from "./probe.ts";
import { ACTION_SELECTORS } from "./signals.ts";

/** `meeting_ended`: the meeting ended while the bot still waited (nobody can admit it any more). */
export type AdmissionResult = "admitted" | "denied" | "timeout" | "meeting_ended" | { error: string; code: Blocked["code"] };

export interface AdmissionOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  logger: Logger;
  ends?: ConversationEndWatch;
  steps?: StepSink;
  /**
   * Told, just before "admitted" is answered, when the call view began to show (performance.now()):
   * the admission itself, which the confirming probes (and a page slow to drop its lobby markers)
   * come after.
   */
  onCallView?: (since: number) => void;
}

const STEP_MS = 500;
/** The call view must show on this many probes in a row, with no lobby text: no false admissions. */
const CONFIRM_PROBES = 2;
/** The pre-join screen back for this long means the join did not go through: not the lobby. */
const PREJOIN_GRACE_MS = 10_000;
/** Nothing recognisable for this long means the lobby page broke. */
const UNKNOWN_GRACE_MS = 30_000;

/** Waits in the lobby until admitted, denied, or `timeoutMs`. Throws the signal's reason on abort. */
export async function waitForAdmission(page: Page, opts: AdmissionOptions): Promise<AdmissionResult> {
  const { logger, signal } = opts;
  const deadline = performance.now() + opts.timeoutMs;
  let inCallStreak = 0;
  let callSince: number | null = null;
  let since = performance.now();
  let last = "";

  while (performance.now() < deadline) {
    signal?.throwIfAborted();
    let probe;
    try {
      probe = await probePage(page);
    } catch (err) {
      return { code: page.isClosed() ? "browser_crashed" : "internal", error: `The browser page failed while waiting in the lobby (${(err as Error).message}).` };
    }
    const { screen, signal: fired } = classify(probe);
    const ended = opts.ends?.latest();
    if (ended) {
      opts.steps?.step("conversation_end", { screen, signal: `ws:conversationEnd subCode=${ended.subCode ?? "none"}` });
      logger.info({ kind: ended.kind, sub_code: ended.subCode }, "teams: the lobby wait ended by the signalling WebSocket");
      if (ended.kind === "anonymous_join_disabled") {
        const b = blockedReason("anon_disabled", "lobby")!;
        return { code: b.code, error: b.message };
      }
      return ended.kind === "ended" ? "meeting_ended" : "denied";
    }
    if (screen !== last) {
      logger.info({ screen, signal: fired }, "teams: lobby wait screen");
      opts.steps?.step("lobby_screen", { screen, signal: fired });
      last = screen;
      since = performance.now();
    }
    // Outcomes of the lobby, not failures: removed from the lobby is a refusal to admit (§9),
    // and an ended meeting (§10) leaves nobody to admit the bot.
    if (screen === "removed" || screen === "ended") {
      logger.info({ screen, signal: fired }, "teams: the lobby wait ended");
      return screen === "removed" ? "denied" : "meeting_ended";
    }
    const blocked = blockedReason(screen, "lobby");
    if (blocked) return { code: blocked.code, error: blocked.message };

    callSince = screen === "in_call" ? (callSince ?? performance.now()) : null;
    inCallStreak = screen === "in_call" && !probe.fired.lobby && !probe.fired.lobby_hint ? inCallStreak + 1 : 0;
    if (inCallStreak >= CONFIRM_PROBES) {
      logger.info({ signal: fired, call_view_ms: Math.round(performance.now() - (callSince ?? performance.now())) }, "teams: admitted");
      opts.onCallView?.(callSince ?? performance.now());
      return "admitted";
    }
    if (screen === "denied") {
      logger.info({ signal: fired }, "teams: denied");
      return "denied";
    }
    if (screen === "modal") await clickFirst(page, ACTION_SELECTORS.modalContinue);
    if (screen === "prejoin" && performance.now() - since > PREJOIN_GRACE_MS) {
      return { code: "prejoin_stuck", error: "Teams went back to the pre-join screen instead of the lobby: the join did not go through." };
    }
    if (screen === "retry_screen" && performance.now() - since > RETRY_SCREEN_MS) {
      logger.warn({ signal: fired }, "teams: a retry screen with no known text");
      return { code: "unexpected_page", error: RETRY_SCREEN_MESSAGE };
    }
    if (screen === "unknown" && performance.now() - since > UNKNOWN_GRACE_MS) {
      return { code: "unexpected_page", error: "The lobby screen disappeared and Teams showed nothing recognisable." };
    }
    await pause(inCallStreak > 0 ? 200 : STEP_MS, signal);
  }
  logger.info("teams: nobody admitted the bot before the lobby wait ran out");
  return "timeout";
}
