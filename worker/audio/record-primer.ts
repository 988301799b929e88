/**
 * Keeps the recording sink's clock short while a warm worker waits for its meeting, so that the
 * session's ffmpeg opens its input at once (issue #20: `/join` → lobby).
 *
 * A null sink with nothing attached renders its monitor in blocks of its maximum latency (2 s
 * in PulseAudio 16), ahead of time, then sleeps until the block is due. A record stream that
 * connects then waits for the sleep to end before it gets its first fragment: ffmpeg took 1.7-2.0 s
 * to open `rec.monitor` on an idle daemon (worker_started → media_ready was 1.2-1.8 s of a warm
 * join of 2.8-3.3 s). A record stream asking for PRIMER_LATENCY_MS keeps the blocks that short:
 * ffmpeg then opened in 143 ms (same box, 4 rounds each; 543 ms with a 500 ms primer). The primer
 * is one `parec` writing to /dev/null, stopped once the recorder is open: the recorder's own
 * stream keeps the sink's clock from then on.
 */
import type { Logger } from "../../shared/log/logger.ts";
import { spawnChild, type Child } from "../../shared/process/child.ts";

/** The blocks the sink renders while primed (a wake-up of PulseAudio and parec each per block). */
export const PRIMER_LATENCY_MS = 100;

export interface RecordPrimer {
  /** Stops the primer's parec; idempotent, never throws. */
  stop(): Promise<void>;
}

export function primeRecordSource(options: { pulseEnv: Record<string, string>; source: string; logger: Logger }): RecordPrimer {
  let child: Child | null = null;
  try {
    child = spawnChild({
      command: "parec",
      args: ["--raw", `--latency-msec=${PRIMER_LATENCY_MS}`, "-d", options.source, "/dev/null"],
      name: "parec-primer",
      logger: options.logger,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...options.pulseEnv },
    });
  } catch (err) {
    // Only slower to open the recording without it.
    options.logger.warn({ err }, "the recording source could not be primed");
  }
  let stopping: Promise<void> | null = null;
  return {
    stop: () => (stopping ??= child ? child.stop({ signal: "SIGTERM", group: true, timeoutMs: 2_000 }).then(() => undefined, () => undefined) : Promise.resolve()),
  };
}
