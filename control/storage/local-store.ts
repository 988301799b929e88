import { constants } from "node:fs";
import { access, copyFile, mkdir, rename, stat, unlink } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { Logger } from "../../shared/log/logger.ts";
import { assertSafe } from "./recording-file-name.ts";
import type { RecordingStore, StoreInput, StoreResult } from "./recording-store.ts";
import { errorCode, errorMessage, localFileError, StorageError } from "./storage-error.ts";

/**
 * Keeps recordings in RECORDINGS_DIR. `location` is the ABSOLUTE path of the final file: the
 * control plane's working directory is not the API client's, so a relative path would be ambiguous
 * in `recording_file` and in webhooks.
 */
export function createLocalStore(deps: { recordingsDir: string; logger: Logger }): RecordingStore {
  const dir = resolve(deps.recordingsDir);
  const logger = deps.logger.child({ storage: "local" });

  async function store(input: StoreInput): Promise<StoreResult> {
    assertSafe(input.sessionId, input.fileName);
    const source = resolve(input.localPath);
    const target = join(dir, input.fileName);
    if (source === target) return { location: target, deleteLocal: false };
    await ensureDirectory(dir);
    try {
      // rename() is atomic within one filesystem: readers see either nothing or the whole file.
      await rename(source, target);
    } catch (error) {
      if (errorCode(error) === "ENOENT" && (await exists(target)) && !(await exists(source))) {
        // A previous attempt already moved it (retry after a crash between rename and reply).
        return { location: target, deleteLocal: false };
      }
      if (errorCode(error) !== "EXDEV") throw localFileError(error, "local", source) ?? wrap(error, source);
      await moveAcrossFilesystems(source, target);
    }
    logger.info({ session_id: input.sessionId, location: target }, "recording stored locally");
    return { location: target, deleteLocal: false };
  }

  async function check(): Promise<void> {
    await ensureDirectory(dir);
  }

  return { kind: "local", store, check };
}

/** Permanent failure when RECORDINGS_DIR cannot be created or written: retrying will not fix it. */
async function ensureDirectory(dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true });
    await access(dir, constants.W_OK);
  } catch (error) {
    throw new StorageError(`RECORDINGS_DIR ${dir} is not a writable directory (${errorMessage(error)})`, {
      code: "local_file",
      backend: "local",
      cause: error,
    });
  }
}

/** Copy next to the target under a temporary name, then rename, so the final name appears atomically. */
async function moveAcrossFilesystems(source: string, target: string): Promise<void> {
  const temporary = `${target}.partial-${process.pid}`;
  try {
    await copyFile(source, temporary);
    await rename(temporary, target);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw localFileError(error, "local", source) ?? wrap(error, source);
  }
  await unlink(source);
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

function wrap(error: unknown, source: string): StorageError {
  return new StorageError(`moving recording ${source} failed: ${errorMessage(error)}`, {
    code: "unknown",
    backend: "local",
    cause: error,
  });
}
