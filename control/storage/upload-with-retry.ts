import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "../../shared/log/logger.ts";
import type { RecordingStore, StoreInput, StoreResult } from "./recording-store.ts";
import { errorMessage, StorageError } from "./storage-error.ts";
import { metrics } from "../metrics/index.ts";

export interface RetryOptions {
  logger: Logger;
  /** Stops retrying (e.g. at shutdown); the local file is kept and a StorageError `aborted` thrown. */
  signal?: AbortSignal;
  /** First wait after a failure; doubles each attempt. Default 1 s. */
  minDelayMs?: number;
  /** Ceiling of the wait. Default 60 s: an outage of hours costs at most a minute of extra delay. */
  maxDelayMs?: number;
}

const DEFAULT_MIN_DELAY_MS = 1_000;
const DEFAULT_MAX_DELAY_MS = 60_000;

/**
 * "Equal jitter" backoff: half the exponential delay fixed, half random, so many workers that
 * failed together during an outage do not all hit the store again in the same instant.
 */
export function backoffDelay(attempt: number, minDelayMs: number, maxDelayMs: number): number {
  const exponential = Math.min(maxDelayMs, minDelayMs * 2 ** Math.min(attempt - 1, 30));
  return exponential / 2 + Math.random() * (exponential / 2);
}

/**
 * Stores a recording, retrying transient failures until it succeeds or `signal` aborts: an outage
 * must not lose a recording. Permanent failures (credentials, missing container/bucket, unreadable
 * file) are thrown at once as a StorageError with `permanent: true` and a message fit for the
 * session's `error_message`. Never touches the local file.
 */
export async function uploadWithRetry(
  store: RecordingStore,
  input: StoreInput,
  options: RetryOptions,
): Promise<StoreResult> {
  const { logger, signal } = options;
  const minDelayMs = options.minDelayMs ?? DEFAULT_MIN_DELAY_MS;
  const maxDelayMs = Math.max(minDelayMs, options.maxDelayMs ?? DEFAULT_MAX_DELAY_MS);
  const log = logger.child({ session_id: input.sessionId, storage: store.kind });

  for (let attempt = 1; ; attempt += 1) {
    if (signal?.aborted) throw aborted(store, input, undefined);
    // Each attempt gets its own signal: an SDK that leaves a listener on the signal it was given
    // (the Azure SDK does on a failed upload) would otherwise pile one per retry onto the caller's
    // long-lived signal during an outage of hours.
    const attemptAbort = new AbortController();
    const forward = (): void => attemptAbort.abort(signal?.reason);
    signal?.addEventListener("abort", forward, { once: true });
    try {
      const result = await store.store(input, attemptAbort.signal);
      metrics.upload(store.kind, "stored");
      if (attempt > 1) log.info({ attempt, location: result.location }, "recording stored after retrying");
      return result;
    } catch (error) {
      if (signal?.aborted) throw aborted(store, input, error);
      const failure = asStorageError(store, error);
      if (failure.permanent) {
        metrics.upload(store.kind, "failed");
        log.error({ attempt, code: failure.code, err: failure.message }, "recording upload failed permanently; local copy kept");
        throw failure;
      }
      const delayMs = Math.round(backoffDelay(attempt, minDelayMs, maxDelayMs));
      metrics.uploadRetry(store.kind);
      log.warn({ attempt, delayMs, err: errorMessage(error) }, "recording upload failed; retrying");
      try {
        await sleep(delayMs, undefined, { signal });
      } catch {
        throw aborted(store, input, error);
      }
    } finally {
      signal?.removeEventListener("abort", forward);
    }
  }
}

/** Stores wrap every runtime failure; anything else is an input or programming error, not an outage. */
function asStorageError(store: RecordingStore, error: unknown): StorageError {
  if (error instanceof StorageError) return error;
  return new StorageError(`recording upload failed: ${errorMessage(error)}`, {
    code: "invalid_input",
    backend: store.kind,
    cause: error,
  });
}

function aborted(store: RecordingStore, input: StoreInput, lastError: unknown): StorageError {
  const last = lastError === undefined ? "" : ` (last error: ${errorMessage(lastError)})`;
  return new StorageError(`upload cancelled before it succeeded; the recording stays at ${input.localPath}${last}`, {
    code: "aborted",
    backend: store.kind,
    cause: lastError,
  });
}
