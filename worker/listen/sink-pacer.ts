/**
 * While the page tap (page-tap/tap.ts) serves a listener, a record stream on the recording's sink
 * that asks PulseAudio for a short fragment, so that the sink renders in short blocks.
 *
 * Why: the null sink renders in blocks of the shortest latency any of its streams asks for, and
 * takes each block from the browser's playback buffer at once; the browser refills it by pulling
 * as much from the page, the WebRTC receiver included. With only the recorder's 200 ms fragment
 * (worker/audio/recorder.ts), the page's audio is pulled in 200 ms bursts: the page tap hears it in
 * bursts, and WebRTC's jitter buffer holds enough to serve them. With this stream, it flows in
 * PACE_MS pieces (the recording is the same; its CPU goes up a little while someone listens).
 * Its audio goes to /dev/null: the sink's own format, so PulseAudio only copies it.
 */
import type { Logger } from "../../shared/log/logger.ts";
import { benchOverride } from "../../shared/process/bench-override.ts";
import { spawnChild, type Child } from "../../shared/process/child.ts";
import { parecArgs, parecEnv } from "../audio/parec.ts";

/**
 * The sink's block while someone listens through the page tap. `make bench-listen` without a
 * mic, alternating, 2026-11-27 (load 1.2-2.4), median / p95 ms from the media server's tone (the
 * one paced as Teams sends): 20 ms 110 / 186 and 105 / 116 against 40 ms 166 / 274 and 147 /
 * 258; from the page's tone 116 / 151 and 145 / 158 against 113 / 154 and 102 / 121. The first
 * listener's CPU, browser included: ~26 % of a core at 20 ms against 11.5-15.5 at 40 (README,
 * live audio out).
 */
export const PACE_MS = 20;

/**
 * The sink's block while nobody listens, with LISTEN_LOW_LATENCY. Paced only while someone
 * listens, the sink renders the recorder's 200 ms blocks the rest of the time, and WebRTC's
 * jitter buffer grows to serve them: a listener who comes 15 s after the join heard the media
 * server's tone 259 / 267 ms late (median / p95) over 30 s, and the first 45 s of two minutes at
 * 206-256 ms before it drained to 86-129, against 92 / 219 for one who came at once (with a
 * shorter memory, ../browser/field-trials.ts, the first ~10 s) (`make bench-listen`, BENCH_SETTLE_MS=15000, 2026-11-27, load 0.4-1.4).
 * Paced all along at 50 ms: 104 / 118 ms (113 / 124 with the recorder's own fragment at 50 ms); at
 * 100 ms 149 / 163. What 50 ms blocks cost a bot all the time is why it is asked for: 5.1 % of a
 * core (`BENCH_PACE_MS=50 make bench-listen-parts`, `pacing`, load 0.5-0.6), against 9.4 at 20 ms.
 */
export const IDLE_PACE_MS = 50;

/** PACE_MS unless TOAMAISUTAA_LISTEN_PACE_MSEC says otherwise (`make bench-listen`: BENCH_PACE_MS). */
export function paceMs(env: NodeJS.ProcessEnv = process.env): number {
  return benchOverride("TOAMAISUTAA_LISTEN_PACE_MSEC", PACE_MS, env);
}

export interface SinkPacer {
  readonly pid: number;
  /** The block it asks for, ms. */
  readonly fragmentMs: number;
  stop(): Promise<void>;
}

/** A pacer asking for `fragmentMs` blocks (paceMs() unless said). */
export function startSinkPacer(options: { pulseEnv: Record<string, string>; source: string; logger: Logger; fragmentMs?: number }): SinkPacer {
  const fragmentMs = options.fragmentMs ?? paceMs();
  const child: Child = spawnChild({
    command: "parec",
    // The sink's own format: PulseAudio only copies.
    args: parecArgs({ ...options, format: { sampleRate: 48_000, channels: 2 }, fragmentMs, stream: "pacer" }),
    env: parecEnv(options.pulseEnv),
    logger: options.logger,
    name: "parec-pacer",
    stdout: "ignore",
    killOnParentExit: true,
  });
  return {
    pid: child.pid,
    fragmentMs,
    async stop() {
      await child.stop({ signal: "SIGTERM", timeoutMs: 2_000 });
    },
  };
}
