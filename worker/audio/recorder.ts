import { stat } from "node:fs/promises";
import type { Logger } from "../../shared/log/logger.ts";
import { spawnChild, type ChildExit } from "../../shared/process/child.ts";
import { killProcessGroup } from "../../shared/process/group.ts";
import { benchOverride } from "../../shared/process/bench-override.ts";

export type RecordingFormat = "wav" | "flac";

export interface RecorderOptions {
  /** The worker's PulseAudio client environment (PulseDaemon.env). */
  pulseEnv: Record<string, string>;
  /** Pulse source to capture, normally "rec.monitor". */
  source: string;
  format: RecordingFormat;
  outPath: string;
  logger: Logger;
  /** How long ffmpeg may take to open the pulse input (measured 0.1-1.9 s on an idle box). */
  startTimeoutMs?: number;
}

export interface RecorderExit extends ChildExit {
  /** False when ffmpeg ended without stop()/kill() being called: the worker must report it. */
  expected: boolean;
}

export interface Recorder {
  readonly pid: number;
  readonly outPath: string;
  /** Resolves once ffmpeg exits, for whatever reason. */
  readonly exited: Promise<RecorderExit>;
  /** Clean stop ("q" on stdin), SIGKILL to the group after timeoutMs; the file's size after. */
  stop(options?: { timeoutMs?: number }): Promise<{ bytes: number; exit: RecorderExit }>;
  /** Immediate SIGKILL of the group (crash path); -flush_packets 1 keeps the file readable. */
  kill(): void;
  /** ffmpeg's last stderr lines (why it stopped). */
  stderrTail(): string[];
}

const DEFAULT_START_TIMEOUT_MS = 20_000;

/**
 * The pulse input's fragment, in ms of 48 kHz stereo s16. The null sink renders in blocks of the
 * shortest fragment a record stream on its monitor asks for, and PulseAudio, ffmpeg and the
 * browser's audio service each wake once per block. ffmpeg's own default is 50 ms; the session's
 * silence watcher already asks for 200 (a listener's tap for 20-40 while it listens). Measured
 * with `make bench-bot` (BENCH_RECORD_FRAGMENT_MS, 6 bots × 90 s with video, alternating runs,
 * load 0.5-4.7), CPU per bot: 50 ms 10.1 and 10.4 % of a core, 100 ms 8.6, 200 ms 7.5 and 8.1,
 * 400 ms 7.9; 0 gaps in every run. What a SIGKILLed ffmpeg or a stop can lose grows with it (the
 * fragment not yet delivered), so not more than where the gain ends. TOAMAISUTAA_RECORD_FRAGMENT_MSEC
 * exists only for `make bench-bot` to A/B it.
 */
export const RECORD_FRAGMENT_MS = 200;

export function recordFragmentMs(env: NodeJS.ProcessEnv = process.env): number {
  return benchOverride("TOAMAISUTAA_RECORD_FRAGMENT_MSEC", RECORD_FRAGMENT_MS, env);
}
/** Finishing a WAV/FLAC header takes milliseconds; more than this means ffmpeg is stuck. */
const DEFAULT_STOP_TIMEOUT_MS = 10_000;

/**
 * The line ffmpeg prints once the pulse input is open and the output file is written: audio
 * from here on is captured. (Nothing before the input opens is recorded: media-pipeline.md.)
 */
const OUTPUT_OPENED = /^Output #0, \w+, to '/;

/**
 * Records a pulse source with ffmpeg in its own process group. Resolves only once ffmpeg has
 * opened its input and output, so anything played after `await startRecorder()` is captured.
 */
export async function startRecorder(options: RecorderOptions): Promise<Recorder> {
  const { outPath, format, logger } = options;
  const codec = format === "flac" ? "flac" : "pcm_s16le";
  const args = [
    "-hide_banner",
    "-nostats", // progress lines end in \r and would flood the log
    "-loglevel",
    "info",
    "-f",
    "pulse",
    "-fragment_size",
    String((48_000 * 2 * 2 * recordFragmentMs()) / 1000),
    "-i",
    options.source,
    "-ac",
    "2",
    "-ar",
    "48000",
    "-c:a",
    codec,
    // Without it a SIGKILLed WAV lost its last ~1 s and a SIGKILLed FLAC was 0 bytes.
    "-flush_packets",
    "1",
    "-f",
    format,
    "-y",
    outPath,
  ];

  let opened!: () => void;
  const openedPromise = new Promise<void>((resolve) => (opened = resolve));
  const child = spawnChild({
    command: "ffmpeg",
    args,
    name: "ffmpeg",
    logger,
    stdin: "pipe",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...options.pulseEnv },
    onStderrLine: (line) => {
      if (OUTPUT_OPENED.test(line)) opened();
    },
  });
  const log = logger.child({ recorder_pid: child.pid });

  let expected = false;
  const exited: Promise<RecorderExit> = child.exited.then(async (exit) => {
    const result = { ...exit, expected };
    if (!expected) {
      // Its last lines say why (ENOSPC: media.ts), and may not be read yet at the exit.
      log.error({ ...exit, stderr: await child.finalStderrTail() }, "recorder exited unexpectedly");
    }
    return result;
  });

  const startTimeoutMs = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    openedPromise.then(() => "opened" as const),
    child.exited.then(() => "exited" as const),
    new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), startTimeoutMs))),
  ]);
  clearTimeout(timer);
  if (outcome !== "opened") {
    expected = true;
    await child.stop({ signal: "SIGKILL", group: true, timeoutMs: 2_000 });
    throw new Error(
      `ffmpeg did not open pulse source ${options.source} (${outcome}): ${child.stderrTail().join(" | ")}`,
    );
  }
  log.debug({ outPath, format, source: options.source }, "recording");

  let stopping: Promise<{ bytes: number; exit: RecorderExit }> | undefined;
  const stop = (opts: { timeoutMs?: number } = {}) => {
    stopping ??= (async () => {
      expected = true;
      const timeoutMs = opts.timeoutMs ?? DEFAULT_STOP_TIMEOUT_MS;
      if (!child.hasExited) {
        // Exactly one request to quit: a second SIGINT makes ffmpeg exit at once and leave a
        // 0-byte file (media-pipeline.md). "q" on stdin is ffmpeg's own clean quit.
        const stdin = child.process.stdin;
        if (stdin && stdin.writable) {
          stdin.end("q");
          await child.stop({ signal: null, timeoutMs });
        } else {
          await child.stop({ signal: "SIGINT", timeoutMs });
        }
      }
      const exit = await exited;
      return { bytes: await fileSize(outPath), exit };
    })();
    return stopping;
  };

  return {
    pid: child.pid,
    outPath,
    exited,
    stop,
    stderrTail: () => child.stderrTail(),
    kill: () => {
      expected = true;
      // Straight to the group, bypassing a stop() that may be waiting on a stuck ffmpeg.
      killProcessGroup(child.pid);
    },
  };
}

async function fileSize(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch {
    return 0;
  }
}
