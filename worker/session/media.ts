import type { Logger } from "../../shared/log/logger.ts";
import type { ErrorCode } from "../../shared/recording/error-codes.ts";
import { killProcessGroup } from "../../shared/process/group.ts";
import { startPulse, type PulseDaemon } from "../audio/pulse.ts";
import type { RecordPrimer } from "../audio/record-primer.ts";
import { startRecorder, type Recorder, type RecordingFormat } from "../audio/recorder.ts";
import { RECORDER_STALL_MS, RECORDER_STALLED, watchRecorderStall } from "../audio/recorder-stall.ts";
import { launchBrowser, loadPlaywright, type BrowserHandle } from "../browser/launch.ts";
import { inTurn } from "./launch-turn.ts";

export interface MediaOptions {
  workDir: string;
  logger: Logger;
  mic: boolean;
  /** The Chromium binary (CHROMIUM_PATH, `init.chromiumPath`); the launcher's default when absent. */
  chromiumPath?: string;
  /** Null when the session does not record (`record` false): no ffmpeg at all. */
  recording: { path: string; format: RecordingFormat } | null;
  /**
   * A warm worker's PulseAudio and Chromium (worker/session/warm.ts): only ffmpeg is started. Its
   * primer (record-primer.ts) is stopped once ffmpeg is open.
   */
  prepared?: { pulse: PulseDaemon; browser: BrowserHandle; primer: RecordPrimer };
  /** Waits for this worker's turn to start Chromium (launch-turn.ts); resolves to its end. */
  launchTurn?: () => Promise<() => void>;
}

/** A failure while the session runs, worded for a person (it becomes `error_message`). */
export class MediaFailure extends Error {
  constructor(
    message: string,
    options: { cause?: unknown } = {},
    /** #16: which part failed, as an error_code. */
    readonly code: ErrorCode = "internal",
  ) {
    super(message, options);
  }
}

/** A media process that died on its own, with the error_code it means. */
export interface MediaFault {
  message: string;
  code: ErrorCode;
}

export interface Media {
  readonly pulse: PulseDaemon;
  readonly recorder: Recorder | null;
  readonly browser: BrowserHandle;
  /** When ffmpeg opened its input (performance.now(), a monotonic clock): sample 0 of the file is (about) this instant. */
  readonly recordingOpenedAt: number | null;
  /** The same instant on the wall clock, for the journal. */
  readonly recordingOpenedWall: number | null;
  readonly pids: Record<string, number>;
  /** Resolves when Chromium, ffmpeg or PulseAudio dies on its own; never rejects. */
  readonly failure: Promise<MediaFault>;
  /** ffmpeg stopped because the recordings disk is full (ENOSPC): error_code `disk_full`. */
  readonly diskFull: boolean;
  /** Stops ffmpeg cleanly (the file complete); idempotent. Null when not recording. */
  stopRecorder(): Promise<{ bytes: number; clean: boolean } | null>;
  /** Closes the browser, stops ffmpeg if still running, then PulseAudio; idempotent, never throws. */
  close(): Promise<void>;
}

function firstLine(err: unknown): string {
  const e = err as Error;
  const cause = e.cause instanceof Error ? `: ${e.cause.message.split("\n")[0]}` : "";
  return `${e.message.split("\n")[0]}${cause}`;
}

/**
 * Starts the worker's media in the order the recording needs: PulseAudio first (its sinks must
 * exist before anyone connects; Playwright loads meanwhile), then ffmpeg and Chromium together:
 * ffmpeg only has to be open BEFORE the join (it takes up to ~2 s to open the pulse input and
 * nothing before that is captured: media-pipeline.md), and the browser plays nothing before the
 * join, so waiting for one before launching the other only delayed the join (~1.7 s measured).
 * A failure closes what was started and throws a MediaFailure naming the part that failed.
 */
export async function startMedia(options: MediaOptions): Promise<Media> {
  const { workDir, logger, mic } = options;
  // Playwright is loaded before ffmpeg starts: its (synchronous) module evaluation must not
  // delay the moment the worker notices ffmpeg opened, which the trim to the admission relies on.
  const playwright = loadPlaywright().then(
    () => null,
    (err: unknown) => err,
  );
  let pulse: PulseDaemon;
  try {
    pulse = options.prepared?.pulse ?? (await startPulse({ dir: workDir, logger, mic }));
  } catch (err) {
    throw new MediaFailure(`PulseAudio failed to start: ${firstLine(err)}`, { cause: err }, "audio_failed");
  }
  await playwright;

  let recordingOpenedAt: number | null = null;
  let recordingOpenedWall: number | null = null;
  const recording = options.recording;
  const recorderStart: Promise<Recorder | null> = recording
    ? startRecorder({ pulseEnv: pulse.env, source: pulse.recMonitor, format: recording.format, outPath: recording.path, logger }).then(
        (started) => {
          // Monotonic: the trim offset must not move when the wall clock is stepped (issue #15).
          recordingOpenedAt = performance.now();
          recordingOpenedWall = Date.now();
          return started;
        },
        (err: unknown) => {
          throw new MediaFailure(`ffmpeg could not start recording to ${recording.path}: ${firstLine(err)}`, { cause: err }, "audio_failed");
        },
      )
    : Promise.resolve(null);
  const prepared = options.prepared?.browser;
  const browserStart = prepared ? Promise.resolve(prepared) : inTurn(options.launchTurn, () => launchBrowser({ dir: workDir, pulseEnv: pulse.env, logger, mic, executablePath: options.chromiumPath })).catch((err: unknown) => {
    throw new MediaFailure(`Chromium failed to launch: ${firstLine(err)}`, { cause: err }, "browser_crashed");
  });
  const [recorderResult, browserResult] = await Promise.allSettled([recorderStart, browserStart]);
  // The recorder's own stream keeps the sink's clock now (or nothing records).
  await options.prepared?.primer.stop();
  if (recorderResult.status === "rejected" || browserResult.status === "rejected") {
    if (browserResult.status === "fulfilled") await browserResult.value.close().catch(() => undefined);
    if (recorderResult.status === "fulfilled") await recorderResult.value?.stop().catch(() => undefined);
    await pulse.stop();
    throw recorderResult.status === "rejected" ? recorderResult.reason : (browserResult as PromiseRejectedResult).reason;
  }
  const recorder = recorderResult.value;
  const browser = browserResult.value;

  let closing = false;
  let diskFull = false;
  let stall: { stop(): void } | undefined;
  const failure = new Promise<MediaFault>((resolve) => {
    void browser.closed.then(({ expected }) => {
      if (!expected && !closing) resolve({ code: "browser_crashed", message: "The browser (Chromium) crashed during the session." });
    });
    // The tab alone can die (its renderer process killed or out of memory) with the browser still
    // up: the meeting is gone with it, and nothing on the dead page will ever answer.
    // A dying browser takes its page along: the browser's own exit, seen a moment later, names it.
    browser.page.once("crash", () => {
      setTimeout(() => {
        if (!closing) resolve({ code: "browser_crashed", message: "The meeting's page crashed (Chromium's renderer process died) during the session." });
      }, 1_000).unref();
    });
    void recorder?.exited.then((exit) => {
      if (!exit.expected && !closing && recorder.stderrTail().some((l) => /No space left on device/i.test(l))) {
        diskFull = true;
        resolve({ code: "disk_full", message: "The recordings disk (RECORDINGS_DIR) is full: recording stopped; what was recorded so far is kept." });
      } else if (!exit.expected && !closing) {
        resolve({ code: "audio_failed", message: `The recorder (ffmpeg) stopped unexpectedly (exit code ${exit.code ?? "none"}, signal ${exit.signal ?? "none"}).` });
      }
    });
    void pulse.exited.then((exit) => {
      if (!closing) resolve({ code: "audio_failed", message: `The audio server (PulseAudio) stopped unexpectedly (exit code ${exit.code ?? "none"}, signal ${exit.signal ?? "none"}).` });
    });
    if (recorder) {
      stall = watchRecorderStall({
        path: recorder.outPath,
        onStall: () => {
          if (closing || recorderStop) return;
          logger.error({ after_ms: RECORDER_STALL_MS }, "the recording file stopped growing");
          resolve({ code: "audio_failed", message: RECORDER_STALLED });
        },
      });
      void recorder.exited.then(() => stall?.stop());
    }
  });

  const pids: Record<string, number> = { pulseaudio: pulse.pid, chromium: browser.pid };
  if (recorder) pids.ffmpeg = recorder.pid;
  // Last resort if the worker exits without close() (a bug, an uncaught error): the children
  // live in their own groups and would outlive us. process.kill is synchronous, fit for "exit".
  const killOnExit = () => {
    for (const pid of Object.values(pids)) killProcessGroup(pid);
  };
  process.once("exit", killOnExit);

  let recorderStop: Promise<{ bytes: number; clean: boolean } | null> | undefined;
  const stopRecorder = () => {
    recorderStop ??= (async () => {
      stall?.stop();
      if (!recorder) return null;
      const { bytes, exit } = await recorder.stop();
      // "q" on stdin ends ffmpeg with 0; anything else means the file may lack its final header.
      return { bytes, clean: exit.code === 0 };
    })();
    return recorderStop;
  };

  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= (async () => {
      closing = true;
      stall?.stop();
      await browser.close().catch((err: unknown) => logger.error({ err }, "closing Chromium failed"));
      await stopRecorder().catch((err: unknown) => logger.error({ err }, "stopping ffmpeg failed"));
      await pulse.stop().catch((err: unknown) => logger.error({ err }, "stopping PulseAudio failed"));
      process.removeListener("exit", killOnExit);
    })();
    return closed;
  };

  return {
    pulse,
    recorder,
    browser,
    recordingOpenedAt,
    recordingOpenedWall,
    pids,
    failure,
    get diskFull() {
      return diskFull;
    },
    stopRecorder,
    close,
  };
}
