import { unlink } from "node:fs/promises";
import type { RecordingStore, StoreInput } from "./recording-store.ts";
import { errorCode, errorMessage } from "./storage-error.ts";
import { uploadWithRetry, type RetryOptions } from "./upload-with-retry.ts";

export interface StoredRecording {
  /** The session's `recording_file`. */
  location: string;
  /** True when the local copy was deleted after the upload was confirmed. */
  localDeleted: boolean;
}

/**
 * The one right order: upload (with retry) → confirmed → only then delete the local copy
 * (recorder-bot.md: "After a successful upload the local copy is deleted"). On any failure the
 * local file is untouched and the StorageError propagates. A failed delete after a confirmed upload
 * is only logged: the recording is safe, and failing the session over a leftover file would be wrong.
 */
export async function storeRecording(
  store: RecordingStore,
  input: StoreInput,
  options: RetryOptions,
): Promise<StoredRecording> {
  const result = await uploadWithRetry(store, input, options);
  if (!result.deleteLocal) return { location: result.location, localDeleted: false };
  try {
    await unlink(input.localPath);
    return { location: result.location, localDeleted: true };
  } catch (error) {
    if (errorCode(error) === "ENOENT") return { location: result.location, localDeleted: true };
    options.logger.warn(
      { session_id: input.sessionId, localPath: input.localPath, err: errorMessage(error) },
      "recording uploaded but the local copy could not be deleted",
    );
    return { location: result.location, localDeleted: false };
  }
}
