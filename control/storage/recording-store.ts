import type { StorageBackend } from "./config.ts";

export type RecordingContentType = "audio/wav" | "audio/flac";

export interface StoreInput {
  /** The finished recording on disk (in RECORDINGS_DIR, possibly under a temporary name). */
  localPath: string;
  sessionId: string;
  reference: string | null;
  /** `<session_id>_<YYYYMMDD>_<HHMMSS>.<ext>` in UTC (decisions.md); see recording-file-name.ts. */
  fileName: string;
  /** The recording's type, or JSON for the speaker timeline stored beside it (issue #17). */
  contentType: RecordingContentType | "application/json";
}

export interface StoreResult {
  /** What goes into the session's `recording_file` (recorder-bot.md, "Recording files"). */
  location: string;
  /** True when the file now lives elsewhere and the local copy may be deleted (cloud backends). */
  deleteLocal: boolean;
}

export interface RecordingStore {
  readonly kind: StorageBackend;
  /**
   * Puts one finished recording in its final place. Idempotent, so a retry after a lost response
   * is safe. Throws a {@link StorageError} (see storage-error.ts). Never deletes the local copy:
   * the caller does that once the result is confirmed (see store-recording.ts).
   */
  store(input: StoreInput, signal?: AbortSignal): Promise<StoreResult>;
  /** Resolves when the store is reachable and usable; throws an Error naming what is wrong (for /readyz). */
  check(): Promise<void>;
}
