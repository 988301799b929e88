import { mkdir, rm, statfs } from "node:fs/promises";
import { dirname } from "node:path";
import type { InitMessage } from "../../shared/ipc/messages.ts";
import { openJournal, type Journal } from "../../shared/journal/index.ts";
import type { Logger } from "../../shared/log/logger.ts";
import { resolveLeaveRules } from "../../shared/session/automatic-leave.ts";
import { createEvidence, type Evidence } from "../evidence/index.ts";
import { createListen, type Listen } from "../listen/index.ts";
import { startMicPlayback } from "../playback/index.ts";
import { watchConversationEnd } from "../teams/conversation-end.ts";
import { startObservation } from "../observe/session-hook.ts";
import { connectObserver } from "../listen/observer-events.ts";
import { leaveMeeting, wrapUiTurns } from "../teams/index.ts";
import { pageDrawing } from "../browser/drawing.ts";
import { within } from "../../shared/timeout.ts";
import { notReady, type Channel } from "./channel.ts";
import { MediaFailure, startMedia, type Media } from "./media.ts";
import { launchTurn } from "./launch-turn.ts";
import { driveMeeting, type DriveOptions, type MeetingRun } from "./meeting.ts";
import { isStopCause, stopOutcome, type Outcome, type StopCause } from "./outcome.ts";
import { StatusReporter } from "./reporter.ts";
import { closeRecording } from "./recording.ts";
import { watchSilence, type SilenceWatch } from "./silence.ts";
import { reportAudioGaps, type AudioGapReport } from "./audio-gaps.ts";
import type { Prepared } from "./warm.ts";
import { startHeartbeat } from "./heartbeat.ts";
import { watchBrowserHealth } from "./browser-health.ts";

/** After a stop, the Teams page gets this long to notice before we leave regardless. */
const STOP_GRACE_MS = 15_000;
/** Leaving is best effort; closing the browser ends the call anyway. */
const LEAVE_TIMEOUT_MS = 10_000;
/** Evidence of a failed session is taken before leaving; a page that does not answer is skipped. */
const EVIDENCE_TIMEOUT_MS = 15_000;
/**
 * Each step of the way out after the recording is closed. A dead page (its renderer crashed) or a
 * hung browser never answers, and a step waiting on it would keep the session running forever.
 */
const CLOSING_STEP_TIMEOUT_MS = 10_000;

/**
 * One meeting, start to finish: media up, `ready`, the Teams drive, then the way out in the order
 * that keeps the file whole — leave the call, stop ffmpeg cleanly, trim, close Chromium and
 * PulseAudio — and `finished`. Returns the exit code. No child survives any path.
 */
export async function runSession(init: InitMessage, channel: Channel, logger: Logger, prepared?: Prepared): Promise<number> {
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
  channel.onRequest(async (request) => notReady(request));

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
  const evidence = createEvidence({ dir: init.evidenceDir ?? null, meetingUrl: init.meetingUrl, logger });
  evidence.steps.step("worker_started");

  let media: Media;
  try {
    media = await startMedia({
      workDir: init.workDir,
      logger,
      mic: init.mic.enabled,
      chromiumPath: init.chromiumPath,
      recording: init.record ? { path: init.recordingPath, format: init.format } : null,
      prepared,
      launchTurn: () => launchTurn(channel.send, logger),
    });
  } catch (err) {
    const message = err instanceof MediaFailure ? err.message : `The worker could not start: ${(err as Error).message}`;
    const errorCode = err instanceof MediaFailure ? err.code : "internal";
    logger.error({ err }, "media start failed");
    evidence.steps.step("media_failed", { signal: errorCode, detail: message });
    await evidence.close();
    await journal.append({ type: "status", status: "error", previous_status: null, at: new Date().toISOString(), end_reason: "error", error_message: message, error_code: errorCode }).catch(() => undefined);
    await channel.send({ type: "initFailed", message, errorCode });
    await journal.close().catch(() => undefined);
    await rm(init.workDir, { recursive: true, force: true }).catch(() => undefined);
    if (prepared && prepared.workDir !== init.workDir) await rm(prepared.workDir, { recursive: true, force: true }).catch(() => undefined);
    return 1;
  }
  const heartbeat = startHeartbeat(init.journalPath);
  // Live listeners (issue #18): the recording's audio and the session's events, whatever `record`
  // and MIC_PLAYBACK_ENABLED say.
  const listen = createListen({ workDir: init.workDir, pulseEnv: media.pulse.env, source: media.pulse.recMonitor, mic: init.mic.enabled, lowLatency: init.listenLowLatency ?? false, logger, status: () => reporter.status });
  reporter.onStatus((status) => listen.publish({ type: "status", status }));
  // The meeting observer's speech and participant events are connected once it starts (below).
  try {
    return await afterStart(init, channel, logger, { media, journal, reporter, stop, abort, evidence, listen });
  } finally {
    // Normally already done; after an unexpected throw it keeps children from outliving us.
    await listen.close();
    await media.close();
    heartbeat.stop();
    await journal.close().catch(() => undefined);
    await rm(init.workDir, { recursive: true, force: true, maxRetries: 3 }).catch((err: unknown) => logger.warn({ err }, "could not remove the work dir"));
    if (prepared && prepared.workDir !== init.workDir) await rm(prepared.workDir, { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
  }
}

interface Started {
  media: Media;
  journal: Journal;
  reporter: StatusReporter;
  stop: AbortController;
  abort: (cause: StopCause) => void;
  evidence: Evidence;
  listen: Listen;
}

async function afterStart(init: InitMessage, channel: Channel, logger: Logger, started: Started): Promise<number> {
  const { media, journal, reporter, stop, abort, evidence, listen } = started;
  const page = media.browser.page;
  evidence.attach(page);
  // In the call the page stops drawing except while the bot acts on it (issue #20).
  const drawing = pageDrawing(page, logger);
  wrapUiTurns(page, drawing.whileDrawing);
  evidence.steps.step("media_ready");
  // Before the page opens the link: the conversationEnd frames of the signalling WebSocket.
  const ends = watchConversationEnd(page, logger);
  const rules = resolveLeaveRules(init.automaticLeave, { lobbyWaitMs: init.lobbyWaitMs, maxRecordingMs: init.maxRecordingMs });
  let silence: SilenceWatch | null = null;
  if (media.recorder) {
    await journal.append({ type: "recording_started", path: init.recordingPath, at: new Date(media.recordingOpenedWall ?? Date.now()).toISOString() });
  }
  void media.failure.then((fault) => {
    evidence.steps.step("media_failed", { signal: fault.code, detail: fault.message });
    abort({ kind: "error", message: fault.message, code: fault.code });
  });
  const playback = await startMicPlayback({ init, pulseEnv: media.pulse.env, browser: media.browser, status: () => reporter.status, logger });
  channel.onRequest(async (request) => {
    if (request.op === "evidence.capture") {
      const shot = await evidence.captureLive(page);
      return shot ? { ok: true, result: shot } : { ok: false, error: { status: 409, message: "The page could not be captured now." } };
    }
    if (listen.handles(request)) return listen.handle(request);
    if (playback) return playback.handle(request);
    return { ok: false, error: { status: 409, message: "microphone playback is not enabled" } };
  });
  // Before the join, as the observer's: the page tap's hooks precede Teams' own code.
  await listen.attachPage(page);
  // Before the join: the observer's page hooks must be in place before Teams' own code runs.
  // The observer works on the wall clock (the page's own samples do).
  const observation = await startObservation({ init, page, recordingOpenedAt: media.recordingOpenedWall, channel, logger });
  // Speech and participant events reach live listeners too (issue #18).
  if (observation.observer) connectObserver(observation.observer, listen, logger);
  logger.info({ pids: media.pids }, "worker ready");
  await channel.send({ type: "ready", pids: media.pids });

  // #13: gaps count from the admission until the bot starts to leave (leaving stops the audio).
  let gapReport: AudioGapReport | null = null;
  let health: { stop(): void } | null = null;
  const onAdmitted = (admittedAt: number) => {
    observation.admitted(Date.now() - (performance.now() - admittedAt));
    void drawing.pause();
    gapReport ??= reportAudioGaps({ gaps: media.pulse.gaps, send: (m) => channel.send(m), logger });
    health ??= watchBrowserHealth({ browser: media.browser, page, logger, steps: evidence.steps, abort });
    if (rules.silenceMs === null) return;
    silence = watchSilence({
      pulseEnv: media.pulse.env,
      source: media.pulse.recMonitor,
      logger,
      silenceMs: rules.silenceMs,
      activeFrom: admittedAt + rules.silenceActivateAfterMs,
      onSilence: () => abort({ kind: "silence" }),
    });
  };
  const closing = async (step: string, work: Promise<unknown>): Promise<void> => {
    const done = work.then(
      () => true,
      (err: unknown) => (logger.warn({ err, step }, "a closing step failed; going on"), true),
    );
    if ((await within(done, CLOSING_STEP_TIMEOUT_MS)) !== true) logger.warn({ step }, "a closing step did not finish in time; going on");
  };
  const run = await driveWithGrace({ init, page, reporter, logger, stop, rules, ends, steps: evidence.steps, onAdmitted, recordingOpenedAt: media.recordingOpenedAt });
  (silence as SilenceWatch | null)?.stop();
  (gapReport as AudioGapReport | null)?.stop();
  (health as { stop(): void } | null)?.stop();
  ends.dispose();
  // A dead or frozen page answers nothing: no drawing, screenshot or click is waited for. Nor is
  // the meeting heard any more: the file ends now, not after the way out (seconds of silence).
  const pageGone = browserFailed(stop.signal);
  const close = () => closeRecording({ init, media, admittedAt: run.admittedAt, journal, logger });
  const closedAtFailure = pageGone ? await close() : undefined;
  // Before leaving: the page emptied by the leave is not everyone leaving the meeting.
  await closing("observer", observation.stop());
  // The playback ffmpegs and the ingest socket go before the call is left.
  await closing("playback", playback?.close() ?? Promise.resolve());
  // The last screenshots and the leave's clicks see a drawing page.
  if (!pageGone) await within(drawing.resume(), EVIDENCE_TIMEOUT_MS);
  let outcome: Outcome = run.outcome;
  // A crashed browser or ffmpeg shows up in the page as a generic failure: name the real cause.
  if (stop.signal.aborted && isStopCause(stop.signal.reason) && stop.signal.reason.kind === "error") {
    outcome = stopOutcome(stop.signal.reason);
  }
  // #16: what the page showed when it failed, before the bot leaves it.
  if (outcome.status === "error" || outcome.status === "not_admitted") {
    await within(pageGone ? evidence.captureConsole() : evidence.captureFailure(page), EVIDENCE_TIMEOUT_MS);
  }

  // Removed or ended: the call is over already, and what the leave's clicks take (up to
  // LEAVE_TIMEOUT_MS when the page still shows the call) is not the meeting's: the file ends first.
  const callOver = outcome.endReason === "removed" || outcome.endReason === "meeting_ended";
  const closedFirst = pageGone ? closedAtFailure : callOver ? await close() : undefined;
  if (run.reached !== "nothing" && !media.browser.page.isClosed() && !pageGone) {
    await within(leaveMeeting(media.browser.page, logger), LEAVE_TIMEOUT_MS);
  }
  const recording = pageGone || callOver ? closedFirst : await close();
  // The tap reads PulseAudio: it stops first; listeners stay attached for the final status.
  await closing("listen", listen.stopAudio());
  await closing("timeline", observation.finish(recording?.firstSampleAt ?? null));
  await closing("timeline flush", observation.flushed());
  await media.close();
  // ffmpeg said ENOSPC, or another part (Chromium's profile) failed on a disk that is full now.
  const diskFull = outcome.status === "error" && (media.diskFull || (await diskIsFull(dirname(init.recordingPath))));
  const errorCode = outcome.status !== "error" ? null : diskFull ? "disk_full" : (outcome.errorCode ?? "internal");
  await reporter.transition(outcome.status, {
    endReason: outcome.endReason,
    ...(outcome.errorMessage ? { errorMessage: outcome.errorMessage } : {}),
    errorCode,
  });
  const evidenceFiles = await evidence.close();
  listen.end();
  await channel.send({
    type: "finished",
    status: outcome.status,
    endReason: outcome.endReason,
    errorMessage: outcome.errorMessage,
    errorCode,
    evidenceFiles,
    recordingPath: recording?.path ?? null,
    recordingBytes: recording?.bytes ?? null,
    at: new Date().toISOString(),
  });
  logger.info({ ...outcome, recording }, "session finished");
  return 0;
}

/** Less than 1 MiB left where the recording is written. */
async function diskIsFull(dir: string): Promise<boolean> {
  try {
    const s = await statfs(dir);
    return Number(s.bavail) * Number(s.bsize) < 1024 * 1024;
  } catch {
    return false;
  }
}

/** The stop was the browser's own failure (crashed, its page crashed, or it stopped answering). */
function browserFailed(signal: AbortSignal): boolean {
  return signal.aborted && isStopCause(signal.reason) && signal.reason.kind === "error" && signal.reason.code === "browser_crashed";
}

/** The drive, bounded after a stop: a page stuck in a Playwright call must not keep us in. */
async function driveWithGrace(options: Omit<DriveOptions, "progress">): Promise<MeetingRun> {
  const { logger, stop } = options;
  const progress: MeetingRun = { outcome: stopOutcome({ kind: "stopped_by_api" }), admittedAt: null, reached: "nothing" };
  const drive = driveMeeting({ ...options, progress });
  const stopped = new Promise<void>((resolve) => (stop.signal.aborted ? resolve() : stop.signal.addEventListener("abort", () => resolve(), { once: true })));
  // Only a drive still running STOP_GRACE_MS after the stop is cut short (and said so).
  const afterStop = stopped.then(async () => {
    // A failed browser will not let the page react: no grace to wait out.
    const run = await within(drive, browserFailed(stop.signal) ? 0 : STOP_GRACE_MS);
    if (run) return run;
    logger.warn("the Teams page did not react to the stop in time; leaving anyway");
    return { ...progress, outcome: stopOutcome(stop.signal.reason as StopCause) };
  });
  return Promise.race([drive, afterStop]);
}
