/**
 * Retrying the end of a session at once instead of at the next start (issue #15): a database or
 * webhook write that fails (a busy or restarting database) is tried again with a backoff that
 * doubles from `minDelayMs` and stays at `maxDelayMs`, never a busy loop, until it succeeds or
 * the abort signal (shutdown) fires; then the journal stays unfinished and the next start resumes.
 */
import type { Logger } from "../../../shared/log/logger.ts";

export interface RetryUntilOptions {
  log: Logger;
  what: string;
  signal?: AbortSignal;
  minDelayMs?: number;
  maxDelayMs?: number;
}

export async function retryUntilDone<T>(work: (attempt: number) => Promise<T>, o: RetryUntilOptions): Promise<T> {
  let delay = o.minDelayMs ?? 500;
  const max = o.maxDelayMs ?? 30_000;
  for (let attempt = 1; ; attempt++) {
    try {
      return await work(attempt);
    } catch (err) {
      if (o.signal?.aborted) throw err;
      o.log.warn({ err, attempt, retry_in_ms: delay }, `${o.what} failed; retrying`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, delay);
        o.signal?.addEventListener("abort", done, { once: true });
        function done(): void {
          clearTimeout(timer);
          o.signal?.removeEventListener("abort", done);
          resolve();
        }
      });
      if (o.signal?.aborted) throw err;
      delay = Math.min(max, delay * 2);
    }
  }
}
