import type { Page } from "playwright-core";
import type { InitMessage } from "../../shared/ipc/messages.ts";
import type { Logger } from "../../shared/log/logger.ts";
import type { LeaveRules } from "../../shared/session/automatic-leave.ts";
import type { StepSink } from "../evidence/steps.ts";
import type { ConversationEndWatch } from "../teams/conversation-end.ts";
import { disableNoiseSuppression, joinMeeting, turnOffIncomingVideo, waitForAdmission, watchCall } from "../teams/index.ts";
import { errorOutcome, isStopCause, stopOutcome, type Outcome } from "./outcome.ts";
import type { StatusReporter } from "./reporter.ts";

/** How far the page got; shared so a caller that gives up on a stuck drive still knows. */
export interface MeetingRun {
  outcome: Outcome;
  /** performance.now() (monotonic) when the bot was seen in the call; null when it never got in. */
  admittedAt: number | null;
  /** Where the page was when the session ended: decides whether there is anything to leave. */
  reached: "nothing" | "lobby" | "call";
}

export interface DriveOptions {
  init: InitMessage;
  page: Page;
  reporter: StatusReporter;
  logger: Logger;
  /** Aborted with a StopCause: stop message, max duration, failure of a media process. */
  stop: AbortController;
  /** Updated as the drive goes (admittedAt, reached); its outcome is set at the end. */
  progress: MeetingRun;
  /** performance.now() when ffmpeg opened its input; null when not recording. */
  recordingOpenedAt: number | null;
  /** The session's leave rules (service defaults with the request's automatic_leave over them). */
  rules: LeaveRules;
  /** The signalling WebSocket's conversationEnd, watched from before the page opened. */
  ends?: ConversationEndWatch;
  steps?: StepSink;
  /** Called once the bot is in the call (starts the silence watch). */
  /** Told the moment the bot is seen in the call (performance.now()): the silence watch and the observer (worker/observe) start there. */
  onAdmitted?: (admittedAt: number) => void;
}

/**
 * Drives the Teams page from the link to the end of the call: joining → lobby → recording (or
 * connected) → the cause that ends it. Never throws: every end is an Outcome.
 */
export async function driveMeeting(options: DriveOptions): Promise<MeetingRun> {
  const { init, page, reporter, logger, stop, progress, rules, ends, steps } = options;
  const signal = stop.signal;
  let maxTimer: NodeJS.Timeout | undefined;
  let callViewAt: number | null = null;
  const done = (outcome: Outcome): MeetingRun => {
    progress.outcome = outcome;
    steps?.step("outcome", { screen: outcome.status, signal: outcome.errorCode ?? outcome.endReason });
    return progress;
  };

  try {
    await reporter.transition("joining");
    steps?.step("joining");
    const joined = await joinMeeting(page, { url: init.meetingUrl, displayName: init.displayName, logger, signal, timeoutMs: init.joinTimeoutMs, ends, steps });
    if (joined.kind === "error") return done(errorOutcome(joined.message, joined.code));
    if (joined.kind === "denied") return done({ status: "denied", endReason: "denied", errorMessage: null });
    logger.info({ signal: joined.signal, kind: joined.kind }, "teams: join reached");

    if (joined.kind === "lobby") {
      progress.reached = "lobby";
      steps?.step("lobby", { signal: joined.signal });
      await reporter.transition("lobby");
      const admission = await waitForAdmission(page, { timeoutMs: rules.lobbyWaitMs, signal, logger, ends, steps, onCallView: (at) => (callViewAt = at) });
      if (admission === "denied") return done({ status: "denied", endReason: "denied", errorMessage: null });
      if (admission === "timeout") return done({ status: "not_admitted", endReason: "lobby_timeout", errorMessage: null });
      // Never admitted, and nobody can admit it now: not_admitted, with the cause in end_reason.
      if (admission === "meeting_ended") return done({ status: "not_admitted", endReason: "meeting_ended", errorMessage: null });
      if (typeof admission === "object") return done(errorOutcome(admission.error, admission.code));
    }

    progress.reached = "call";
    // From the lobby: when the call view began to show, not when the probes confirmed it.
    const admittedAt = callViewAt ?? performance.now();
    const joinedAt = new Date().toISOString();
    progress.admittedAt = admittedAt;
    // Journalled before the in-call status: every path that keeps the file (a crash too) cuts it here.
    const openedAt = options.recordingOpenedAt;
    if (openedAt !== null) await reporter.admitted(Math.max(0, admittedAt - openedAt) / 1000);
    steps?.step("in_call", { signal: joined.kind === "in_call" ? joined.signal : "admitted" });
    // MAX_RECORDING_MINUTES (or automatic_leave.max_duration_minutes) counts from admission, for record false sessions too.
    maxTimer = setTimeout(() => stop.abort({ kind: "max_duration" }), rules.maxDurationMs);
    await reporter.transition(init.record ? "recording" : "connected", { joinedAt });
    options.onAdmitted?.(admittedAt);

    // Best effort too: Teams stops sending video; the browser's video guard holds without it.
    void turnOffIncomingVideo(page, logger, signal).catch(() => undefined);

    if (init.mic.enabled && init.mic.disableNoiseSuppression) {
      // Best effort, alongside the watch: the call goes on with suppression on if Teams hides
      // the control. UI turns keep its menu walk apart from the watch's and the mic's clicks.
      void disableNoiseSuppression(page, logger, signal).then(
        (ns) => logger.info({ ok: ns.ok, signal: ns.signal }, "noise suppression"),
        () => undefined,
      );
    }

    const watched = await watchCall(page, {
      logger,
      signal,
      aloneChecks: rules.aloneChecks,
      botNames: rules.botNames,
      displayName: init.displayName,
      ends,
      steps,
      onParticipants: (count) => reporter.participants(count),
    });
    if (typeof watched === "object") return done(errorOutcome(watched.error, watched.code));
    return done({ status: "stopped", endReason: watched, errorMessage: null });
  } catch (err) {
    if (signal.aborted && isStopCause(signal.reason)) return done(stopOutcome(signal.reason));
    logger.error({ err }, "the meeting drive failed");
    return done(errorOutcome(`The browser page failed: ${(err as Error).message.split("\n")[0]}`, page.isClosed() ? "browser_crashed" : "internal"));
  } finally {
    clearTimeout(maxTimer);
  }
}
