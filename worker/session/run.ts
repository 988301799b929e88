import { mkdir, rm } from "node:fs/promises";
import type { InitMessage } from "../../shared/ipc/messages.ts";
import { openJournal, type Journal } from "../../shared/journal/index.ts";
import type { Logger } from "../../shared/log/logger.ts";
import { startMicPlayback } from "../playback/index.ts";
import { leaveMeeting } from "../teams/index.ts";
import type { Channel } from "./channel.ts";
import { MediaFailure, startMedia, type Media } from "./media.ts";
import { driveMeeting, type MeetingRun } from "./meeting.ts";
import { isStopCause, stopOutcome, type Outcome, type StopCause } from "./outcome.ts";
import { StatusReporter } from "./reporter.ts";
import { closeRecording } from "./recording.ts";

/** After a stop, the Teams page gets this long to notice before we leave regardless. */
const STOP_GRACE_MS = 15_000;
/** Leaving is best effort; closing the browser ends the call anyway. */
const LEAVE_TIMEOUT_MS = 10_000;

/**
 * One meeting, start to finish: media up, `ready`, the Teams drive, then the way out in the order
 * that keeps the file whole — leave the call, stop ffmpeg cleanly, trim, close Chromium and
 * PulseAudio — and `finished`. Returns the exit code. No child survives any path.
 */
export async function runSession(init: InitMessage, channel: Channel, logger: Logger): Promise<number> {
  const stop = new AbortController();
  const abort = (cause: StopCause) => {
    if (!stop.signal.aborted) {
      logger.info({ cause }, "session stop requested");
      stop.abort(cause);
    }
  };
  channel.onStop((reason) => abort({ kind: reason === "shutdown" ? "shutdown" : "stopped_by_api" }));
  channel.onDisconnect(() => abort({ kind: "disconnect" }));
  const onSignal = () => abort({ kind: "shutdown" });
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  channel.onRequest(async () => ({ ok: false, error: { status: 409, message: "microphone playback is not enabled" } }));

  let journal: Journal;
  try {
    await mkdir(init.workDir, { recursive: true, mode: 0o700 });
    journal = await openJournal(init.journalPath, { fsync: true });
  } catch (err) {
    await channel.send({ type: "initFailed", message: `Cannot prepare the session's files (${(err as Error).message}); check that RECORDINGS_DIR is writable.` });
    await rm(init.workDir, { recursive: true, force: true }).catch(() => undefined);
    return 1;
  }
  const reporter = new StatusReporter(channel, journal, logger);

  let media: Media;
  try {
    media = await startMedia({
      workDir: init.workDir,
      logger,
      mic: init.mic.enabled,
      chromiumPath: init.chromiumPath,
      recording: init.record ? { path: init.recordingPath, format: init.format } : null,
    });
  } catch (err) {
    const message = err instanceof MediaFailure ? err.message : `The worker could not start: ${(err as Error).message}`;
    logger.error({ err }, "media start failed");
    await journal.append({ type: "status", status: "error", previous_status: null, at: new Date().toISOString(), end_reason: "error", error_message: message }).catch(() => undefined);
    await channel.send({ type: "initFailed", message });
    await journal.close().catch(() => undefined);
    await rm(init.workDir, { recursive: true, force: true }).catch(() => undefined);
    return 1;
  }
  try {
    return await afterStart(init, channel, logger, { media, journal, reporter, stop, abort });
  } finally {
    // Normally already done; after an unexpected throw it keeps children from outliving us.
    await media.close();
    await journal.close().catch(() => undefined);
    await rm(init.workDir, { recursive: true, force: true, maxRetries: 3 }).catch((err: unknown) => logger.warn({ err }, "could not remove the work dir"));
  }
}

interface Started {
  media: Media;
  journal: Journal;
  reporter: StatusReporter;
  stop: AbortController;
  abort: (cause: StopCause) => void;
}

async function afterStart(init: InitMessage, channel: Channel, logger: Logger, started: Started): Promise<number> {
  const { media, journal, reporter, stop, abort } = started;
  if (media.recorder) {
    await journal.append({ type: "recording_started", path: init.recordingPath, at: new Date(media.recordingOpenedAt ?? Date.now()).toISOString() });
  }
  void media.failure.then((message) => abort({ kind: "error", message }));
  const playback = await startMicPlayback({ init, pulseEnv: media.pulse.env, browser: media.browser, status: () => reporter.status, logger });
  if (playback) channel.onRequest((request) => playback.handle(request));
  logger.info({ pids: media.pids }, "worker ready");
  await channel.send({ type: "ready", pids: media.pids });

  const run = await driveWithGrace(init, media, reporter, logger, stop);
  // The playback ffmpegs and the ingest socket go before the call is left.
  await playback?.close();
  let outcome: Outcome = run.outcome;
  // A crashed browser or ffmpeg shows up in the page as a generic failure: name the real cause.
  if (stop.signal.aborted && isStopCause(stop.signal.reason) && stop.signal.reason.kind === "error") {
    outcome = stopOutcome(stop.signal.reason);
  }

  if (run.reached !== "nothing" && !media.browser.page.isClosed()) {
    await withTimeout(leaveMeeting(media.browser.page, logger), LEAVE_TIMEOUT_MS);
  }
  const recording = await closeRecording({ init, media, admittedAt: run.admittedAt, journal, logger });
  await media.close();
  await reporter.transition(outcome.status, {
    endReason: outcome.endReason,
    ...(outcome.errorMessage ? { errorMessage: outcome.errorMessage } : {}),
  });
  await channel.send({
    type: "finished",
    status: outcome.status,
    endReason: outcome.endReason,
    errorMessage: outcome.errorMessage,
    recordingPath: recording?.path ?? null,
    recordingBytes: recording?.bytes ?? null,
    at: new Date().toISOString(),
  });
  logger.info({ ...outcome, recording }, "session finished");
  return 0;
}

/** The drive, bounded after a stop: a page stuck in a Playwright call must not keep us in. */
async function driveWithGrace(init: InitMessage, media: Media, reporter: StatusReporter, logger: Logger, stop: AbortController): Promise<MeetingRun> {
  const progress: MeetingRun = { outcome: stopOutcome({ kind: "stopped_by_api" }), admittedAt: null, reached: "nothing" };
  const drive = driveMeeting({ init, page: media.browser.page, reporter, logger, stop, progress });
  const stuck = new Promise<MeetingRun>((resolve) => {
    stop.signal.addEventListener("abort", () => {
      setTimeout(() => {
        logger.warn("the Teams page did not react to the stop in time; leaving anyway");
        resolve({ ...progress, outcome: stopOutcome(stop.signal.reason as StopCause) });
      }, STOP_GRACE_MS).unref();
    });
  });
  return Promise.race([drive, stuck]);
}

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
