/**
 * A listen tap: a `parec` reading the recording's own source (the `rec` sink's monitor), so
 * listeners hear exactly what the recording hears, asking PulseAudio for the listener's rate and
 * channel count, and writing it straight into the control plane's socket (shared/listen/wire.ts,
 * `audio`): the audio never passes through this worker. The daemon converts with its resampler
 * (speex, windowed sinc: worker/audio/pulse.ts says which quality and why); stereo to mono is its
 * average of L and R. It is a reader beside the recorder's ffmpeg rather than a tee inside it, so
 * a listener can never stall or end the recording, and `record` false sessions (no recorder) are
 * heard the same way.
 *
 * Against the design before it (the same parec, read by this worker, framed and written to the
 * control plane's socket): one process fewer woken per fragment, and the worker's share of a
 * listener's CPU gone (see the commit that brought it for the A/B). Tried and dropped: formats
 * after the first converted in this worker from one shared 48 kHz parec (the page tap's
 * resampler), which saves their parecs and streams but costs more in JavaScript than PulseAudio's
 * speex does in C: four formats, this worker's part, PulseAudio and the parecs, 20 s windows,
 * alternating, 2026-11-27 (load 0.4-1.0): 4.70 and 5.03 % of a core with a parec each, 6.38 and
 * 7.04 with the shared one.
 */
import type { Socket } from "node:net";
import type { Logger } from "../../shared/log/logger.ts";
import type { ListenFormat } from "../../shared/listen/protocol.ts";
import { benchOverride } from "../../shared/process/bench-override.ts";
import { spawnChild, type Child, type ChildExit } from "../../shared/process/child.ts";
import { parecArgs, parecEnv } from "../audio/parec.ts";

/**
 * PulseAudio's fragment for this record stream. Its default (~2 s of buffer, fragments of
 * hundreds of ms) would put that much in front of every listener. PulseAudio, parec and the
 * control plane wake once per fragment; while this worker also read and relayed each one, the
 * fragment set most of listening's CPU (since the tap writes to the control plane directly, an
 * 80 ms fragment no longer lowers it: README, live audio out). It follows what lies in front of
 * the tap:
 * - with a microphone the browser plays through Chromium's own ~30 ms buffer and a listener hears
 *   the meeting ~125 ms late: 20 ms, one listener frame. 40 ms (`make bench-listen`, 2026-11-26,
 *   load 1-2.5, two adjacent pairs) cut the CPU of four listeners of four formats from 2.76 and
 *   2.55 to 1.4 and 1.5 % of a core each but added 3-11 ms (median 143-151 ms against 127-153):
 *   no margin left under the 150 ms target;
 * - without one the browser holds 500 ms (worker/browser/launch.ts: recordings without underrun
 *   gaps on a loaded box) and the meeting arrives ~500 ms late here: 40 ms, which adds ~10 ms to
 *   that and halves the wake-ups. Such sessions are heard through the page tap
 *   (page-tap/tap.ts); this one serves them only when the page plays what that tap cannot read.
 */
export const TAP_MS = { withMic: 20, withoutMic: 40 } as const;

/**
 * The fragment for a worker with or without a microphone, unless TOAMAISUTAA_LISTEN_TAP_MSEC
 * says otherwise, which exists only so that `make bench-listen` can A/B it (BENCH_TAP_MS).
 */
export function tapLatencyMs(mic: boolean, env: NodeJS.ProcessEnv = process.env): number {
  return benchOverride("TOAMAISUTAA_LISTEN_TAP_MSEC", mic ? TAP_MS.withMic : TAP_MS.withoutMic, env);
}
const STOP_TIMEOUT_MS = 2_000;

export interface CaptureOptions {
  pulseEnv: Record<string, string>;
  /** The recorder's source, normally "rec.monitor" (PulseDaemon.recMonitor). */
  source: string;
  /** What the listener asked for: PulseAudio converts to it. */
  format: ListenFormat;
  /** PulseAudio's fragment, ms (tapLatencyMs). */
  fragmentMs: number;
  logger: Logger;
  /** The reader's socket: parec writes into it; this process's own handle is closed at once. */
  output: Socket;
}

export interface CaptureExit extends ChildExit {
  /** Stopped by us. */
  expected: boolean;
  /** The reader closed its end (parec's write failed with EPIPE): a listener left, not a failure. */
  readerGone: boolean;
}

export interface Capture {
  readonly pid: number;
  /** Resolves when parec exits. */
  readonly exited: Promise<CaptureExit>;
  stop(): Promise<void>;
}

/** pacat's message when its stdout's reader went away (it ignores SIGPIPE); the C locale is set. */
const BROKEN_PIPE = /write\(\) failed: Broken pipe/;

export function startCapture(options: CaptureOptions): Capture {
  const child: Child = spawnChild({
    command: "parec",
    args: parecArgs({ ...options, stream: "listen" }),
    env: parecEnv(options.pulseEnv),
    logger: options.logger,
    name: "parec-listen",
    stdout: options.output,
    killOnParentExit: true,
  });
  // parec holds its own duplicate; this one is never read (the reader sends nothing after its hello).
  options.output.destroy();
  let expected = false;
  const exited = child.exited.then(async (exit) => {
    // 'exit' may come before the last stderr line is read: the verdict needs that line.
    const readerGone = exit.code === 1 && (await child.finalStderrTail()).some((line) => BROKEN_PIPE.test(line));
    return { ...exit, expected, readerGone };
  });
  return {
    pid: child.pid,
    exited,
    async stop() {
      expected = true;
      await child.stop({ signal: "SIGTERM", timeoutMs: STOP_TIMEOUT_MS });
    },
  };
}
