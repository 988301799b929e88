/**
 * The listen tap: one `parec` per session reading the recording's own source (the `rec` sink's
 * monitor), so listeners hear exactly what the recording hears, as 48 kHz stereo s16le. It is a
 * second reader beside the recorder's ffmpeg rather than a tee inside it, so a listener can never
 * stall or end the recording, and `record` false sessions (no recorder) are heard the same way.
 *
 * Measured on this machine (parec vs. alternatives, 20-30 s each with a tone in `rec`, load 8-11):
 * a second `ffmpeg -f pulse` per listener, resampling itself, cost 0.45% of a core plus 0.35% in
 * PulseAudio per listener; this shared parec costs 0.2-0.3% once per session, and each listening
 * format adds a pipe-fed resampler ffmpeg of 0.35% (bench/listen.ts prints the live figures). A
 * tee in the recorder's ffmpeg added 0.17%, but it exists only while recording and a blocked
 * output would hold up the file.
 */
import type { Logger } from "../../shared/log/logger.ts";
import { SOURCE_CHANNELS, SOURCE_RATE } from "../../shared/listen/protocol.ts";
import { benchOverride } from "../../shared/process/bench-override.ts";
import { spawnChild, type Child, type ChildExit } from "../../shared/process/child.ts";
import { killProcessGroup } from "../../shared/process/group.ts";

/**
 * PulseAudio's fragment for this record stream. Its default (~2 s of buffer, fragments of
 * hundreds of ms) would put that much in front of every listener; 20 ms is one listener frame.
 * Every process on the path wakes once per fragment (PulseAudio, parec, the resampler, this
 * worker, the control plane), so the fragment sets most of listening's CPU: 40 ms, A/B against
 * 20 ms in two adjacent pairs of `make bench-listen` runs (2026-11-26, load 1-2.5), cut the
 * service's CPU for four listeners of four formats from 2.76 and 2.55 to 1.4 and 1.5 % of a core
 * each, but added 3-11 ms to the listening path (with the mic: median 143-151 ms against 127-153
 * for the whole meeting-to-listener latency). 20 ms stays: the latency target (median 150 ms)
 * has no margin left at 40.
 */
const LATENCY_MS = 20;

/**
 * The fragment: LATENCY_MS unless TOAMAISUTAA_LISTEN_TAP_MSEC says otherwise, which exists only
 * so that `make bench-listen` can A/B it (BENCH_TAP_MS).
 */
export function tapLatencyMs(env: NodeJS.ProcessEnv = process.env): number {
  return benchOverride("TOAMAISUTAA_LISTEN_TAP_MSEC", LATENCY_MS, env);
}
const STOP_TIMEOUT_MS = 2_000;

export interface CaptureOptions {
  pulseEnv: Record<string, string>;
  /** The recorder's source, normally "rec.monitor" (PulseDaemon.recMonitor). */
  source: string;
  logger: Logger;
  onChunk: (chunk: Buffer) => void;
}

export interface Capture {
  readonly pid: number;
  /** Resolves when parec exits; `expected` false when nobody stopped it. */
  readonly exited: Promise<ChildExit & { expected: boolean }>;
  stop(): Promise<void>;
}

export function startCapture(options: CaptureOptions): Capture {
  const child: Child = spawnChild({
    command: "parec",
    args: [
      "--raw",
      "--format=s16le",
      `--rate=${SOURCE_RATE}`,
      `--channels=${SOURCE_CHANNELS}`,
      `--latency-msec=${tapLatencyMs()}`,
      `--device=${options.source}`,
      "--client-name=bot-listen",
      "--stream-name=listen",
    ],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...options.pulseEnv },
    logger: options.logger,
    name: "parec-listen",
    binaryStdout: true,
  });
  child.process.stdout?.on("data", options.onChunk);
  let expected = false;
  const killOnExit = () => killProcessGroup(child.pid);
  process.once("exit", killOnExit);
  const exited = child.exited.then((exit) => {
    process.removeListener("exit", killOnExit);
    return { ...exit, expected };
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
