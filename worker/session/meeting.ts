import type { Page } from "playwright-core";
import type { InitMessage } from "../../shared/ipc/messages.ts";
import type { Logger } from "../../shared/log/logger.ts";
import { disableNoiseSuppression, joinMeeting, waitForAdmission, watchCall } from "../teams/index.ts";
import { errorOutcome, isStopCause, stopOutcome, type Outcome } from "./outcome.ts";
import type { StatusReporter } from "./reporter.ts";

/** How far the page got; shared so a caller that gives up on a stuck drive still knows. */
export interface MeetingRun {
  outcome: Outcome;
  /** Epoch ms when the bot was seen in the call; null when it never got in. */
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
}

/**
 * Drives the Teams page from the link to the end of the call: joining → lobby → recording (or
 * connected) → the cause that ends it. Never throws: every end is an Outcome.
 */
export async function driveMeeting(options: DriveOptions): Promise<MeetingRun> {
  const { init, page, reporter, logger, stop, progress } = options;
  const signal = stop.signal;
  let maxTimer: NodeJS.Timeout | undefined;
  const done = (outcome: Outcome): MeetingRun => {
    progress.outcome = outcome;
    return progress;
  };

  try {
    await reporter.transition("joining");
    const joined = await joinMeeting(page, { url: init.meetingUrl, displayName: init.displayName, logger, signal });
    if (joined.kind === "error") return done(errorOutcome(joined.message));
    if (joined.kind === "denied") return done({ status: "denied", endReason: "denied", errorMessage: null });
    logger.info({ signal: joined.signal, kind: joined.kind }, "teams: join reached");

    if (joined.kind === "lobby") {
      progress.reached = "lobby";
      await reporter.transition("lobby");
      const admission = await waitForAdmission(page, { timeoutMs: init.lobbyWaitMs, signal, logger });
      if (admission === "denied") return done({ status: "denied", endReason: "denied", errorMessage: null });
      if (admission === "timeout") return done({ status: "not_admitted", endReason: "lobby_timeout", errorMessage: null });
      // Never admitted, and nobody can admit it now: not_admitted, with the cause in end_reason.
      if (admission === "meeting_ended") return done({ status: "not_admitted", endReason: "meeting_ended", errorMessage: null });
      if (typeof admission === "object") return done(errorOutcome(admission.error));
    }

    progress.reached = "call";
    const admittedAt = Date.now();
    progress.admittedAt = admittedAt;
    // MAX_RECORDING_MINUTES counts from admission, for record false sessions too.
    maxTimer = setTimeout(() => stop.abort({ kind: "max_duration" }), init.maxRecordingMs);
    await reporter.transition(init.record ? "recording" : "connected", { joinedAt: new Date(admittedAt).toISOString() });

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
      onParticipants: (count) => reporter.participants(count),
    });
    if (typeof watched === "object") return done(errorOutcome(watched.error));
    return done({ status: "stopped", endReason: watched, errorMessage: null });
  } catch (err) {
    if (signal.aborted && isStopCause(signal.reason)) return done(stopOutcome(signal.reason));
    logger.error({ err }, "the meeting drive failed");
    return done(errorOutcome(`The browser page failed: ${(err as Error).message.split("\n")[0]}`));
  } finally {
    clearTimeout(maxTimer);
  }
}
