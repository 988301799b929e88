/**
 * A recorder that stops writing without exiting: ffmpeg frozen (stopped, stuck on a wedged
 * volume) or PulseAudio no longer delivering (ffmpeg then blocks on its input). Its file grows
 * about five times a second while it works (`-flush_packets 1`, 200 ms fragments, silence too:
 * the null sink runs on its own clock), so a file that has not grown for STALL_MS means the
 * recording is no longer being made. Without this the session went on reporting `recording` and
 * ended `stopped` with a file that had stopped at the freeze.
 */
import { stat } from "node:fs/promises";

/** Far beyond any pause a loaded machine gives a working recorder (fragments are 200 ms). */
export const RECORDER_STALL_MS = 15_000;
const CHECK_MS = 2_500;

export const RECORDER_STALLED = `The recorder (ffmpeg) stopped writing for ${RECORDER_STALL_MS / 1000} s (it or the audio server no longer responds): the recording holds the meeting up to then.`;

/** Calls `onStall` once when `path` has not grown for `stallMs`; `stop()` is idempotent. */
export function watchRecorderStall(o: { path: string; onStall: () => void; stallMs?: number; checkMs?: number }): { stop(): void } {
  const stallMs = o.stallMs ?? RECORDER_STALL_MS;
  let size = -1;
  let grewAt = performance.now();
  let stopped = false;
  const timer = setInterval(() => {
    void stat(o.path).then(
      (s) => {
        if (stopped) return;
        if (s.size !== size) {
          size = s.size;
          grewAt = performance.now();
        } else if (performance.now() - grewAt >= stallMs) {
          stop();
          o.onStall();
        }
      },
      // Not there yet (ffmpeg creates it as it opens): the clock runs from the watch's start.
      () => undefined,
    );
  }, o.checkMs ?? CHECK_MS);
  timer.unref();
  const stop = () => {
    stopped = true;
    clearInterval(timer);
  };
  return { stop };
}
