/**
 * "Full jitter" backoff (AWS Architecture Blog, "Exponential Backoff And Jitter"): a uniform delay
 * between 0 and min(max, min * 2^attempt). Spreading retries keeps many sessions that failed
 * together from hammering a receiver in lockstep when it comes back.
 */
export function fullJitterDelay(
  attempt: number,
  minBackoffMs: number,
  maxBackoffMs: number,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(maxBackoffMs, minBackoffMs * 2 ** Math.min(attempt, 52));
  return Math.floor(random() * ceiling);
}
