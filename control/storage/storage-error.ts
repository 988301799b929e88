import type { StorageBackend } from "./config.ts";

/**
 * Why a store failed, for the caller's decision and the session's `error_message`:
 * - `auth`: credentials refused (never succeeds without a config change) — permanent.
 * - `not_found`: the container/bucket does not exist — permanent.
 * - `local_file`: the recording on disk (or RECORDINGS_DIR) is missing or unusable — permanent.
 * - `invalid_input`: the store was called with something it cannot take (unsafe name), or threw
 *   something other than a StorageError (a bug) — permanent: retrying a bug forever helps no one.
 * - `unreachable`: network, DNS, timeouts, 5xx, throttling — transient, retried.
 * - `aborted`: the caller's signal stopped the upload; the local file is kept.
 * - `unknown`: anything else — treated as transient so an outage cannot lose a recording.
 */
export type StorageErrorCode = "auth" | "not_found" | "local_file" | "invalid_input" | "unreachable" | "aborted" | "unknown";

const PERMANENT_CODES: ReadonlySet<StorageErrorCode> = new Set(["auth", "not_found", "local_file", "invalid_input"]);

export class StorageError extends Error {
  override readonly name = "StorageError";
  readonly code: StorageErrorCode;
  readonly backend: StorageBackend;
  /** True when retrying cannot help; the message then says what a person must change. */
  readonly permanent: boolean;

  constructor(message: string, options: { code: StorageErrorCode; backend: StorageBackend; cause?: unknown }) {
    super(message, { cause: options.cause });
    this.code = options.code;
    this.backend = options.backend;
    this.permanent = PERMANENT_CODES.has(options.code);
  }
}

/** Turns an error from reading the local file (ENOENT, EACCES, EISDIR) into a permanent StorageError, or undefined. */
export function localFileError(error: unknown, backend: StorageBackend, localPath: string): StorageError | undefined {
  const code = errorCode(error);
  if (code === "ENOENT" || code === "EACCES" || code === "EPERM" || code === "EISDIR") {
    return new StorageError(`recording file ${localPath} cannot be read (${code}); nothing to upload`, {
      code: "local_file",
      backend,
      cause: error,
    });
  }
  return undefined;
}

/** `error.code` when it is a string (Node system errors, Azure RestError). */
export function errorCode(error: unknown): string | undefined {
  if (typeof error === "object" && error !== null && "code" in error && typeof error.code === "string") {
    return error.code;
  }
  return undefined;
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function isAbortError(error: unknown, signal: AbortSignal | undefined): boolean {
  if (signal?.aborted) return true;
  return error instanceof Error && error.name === "AbortError";
}
