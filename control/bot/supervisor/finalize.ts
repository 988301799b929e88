/**
 * The one way a session ends, for a clean finish, a crashed worker and a recovered journal alike:
 * journal the final status (so a restart keeps it), repair the recording when its ffmpeg was
 * killed, store it under its final name (`upload_pending` before, retried with backoff until it
 * succeeds, `stored` after, only then the local copy deleted), write the outcome to the database,
 * and only then the `finished` webhook; the journal's `finished` record last, so a crash anywhere
 * before it makes the next start redo the rest. A permanent storage failure (credentials, missing
 * container or bucket) ends the session `error` with the store's message and keeps the local file.
 */
import { rm, stat, unlink } from "node:fs/promises";
import type { Logger } from "../../../shared/log/logger.ts";
import { openJournal, readJournal, summarizeJournal, type JournalRecord, type JournalSummary } from "../../../shared/journal/index.ts";
import type { EndReason, RecordingFormat, SessionStatus } from "../../../shared/journal/records.ts";
import { repairRecording } from "../../../shared/recording/index.ts";
import { recordingFileName, StorageError, uploadWithRetry, type RecordingStore, type RetryOptions } from "../../storage/index.ts";
import type { Notifier } from "../notifier.ts";
import type { SessionRepo } from "../session-repo.ts";

export interface FinalizeDeps {
  repo: SessionRepo;
  store: RecordingStore;
  notifier: Notifier;
  logger: Logger;
  /** Aborts upload retries (shutdown): the journal then stays unfinished for the next start. */
  signal?: AbortSignal;
  now: () => Date;
  /** Backoff of the upload retries (defaults of uploadWithRetry: 1 s doubling to 60 s). */
  retry?: Pick<RetryOptions, "minDelayMs" | "maxDelayMs">;
}

export interface Outcome {
  sessionId: string;
  reference: string | null;
  format: RecordingFormat;
  status: SessionStatus;
  previous: SessionStatus | null;
  endReason: EndReason;
  errorMessage: string | null;
  /** The file ffmpeg wrote, or null when nothing was recorded. */
  recordingPath: string | null;
  /** ffmpeg was killed: the headers need rewriting before the file is stored. */
  needsRepair: boolean;
  /** Names the stored file (`<id>_<YYYYMMDD>_<HHMMSS>`, UTC). */
  startedAt: Date;
  /** Already stored by an earlier run (journal `stored`): nothing to move. */
  storedLocation?: string | null;
  /** A name chosen by an earlier run (journal `upload_pending`), reused so a retry is idempotent. */
  pendingFileName?: string | null;
  journalPath: string;
  /** Folders of the session to remove once everything is safe. */
  cleanup: string[];
  endedAt?: Date;
}

export async function finalizeSession(deps: FinalizeDeps, o: Outcome): Promise<void> {
  const log = deps.logger.child({ session_id: o.sessionId });
  const journal = await openJournal(o.journalPath, { fsync: true }).catch((err: unknown) => {
    log.error({ err }, "journal cannot be opened; finishing without it");
    return null;
  });
  const note = async (record: JournalRecord): Promise<void> => {
    await journal?.append(record).catch((err: unknown) => log.warn({ err, record: record.type }, "journal append failed"));
  };
  const endedAt = o.endedAt ?? deps.now();
  let status = o.status;
  let endReason = o.endReason;
  let errorMessage = o.errorMessage;
  let recordingFile = o.storedLocation ?? null;
  let recordingBytes: number | null = null;
  // A recording that could not be stored stays where it is, for an operator to rescue.
  let keepFiles = false;
  try {
    await noteFinalStatus(o, note, await summaryOf(o.journalPath), deps.now());
    const present = o.recordingPath !== null && (await sizeOf(o.recordingPath)) !== null;
    // The local store may have moved the file just before a crash: its retry finds it in place.
    const movedLocally = o.recordingPath !== null && !present && !!o.pendingFileName && deps.store.kind === "local";
    if (!recordingFile && o.recordingPath && (present || movedLocally)) {
      if (o.needsRepair && present) {
        try {
          const repaired = await repairRecording(o.recordingPath, o.format);
          await note({ type: "recording_repaired", path: o.recordingPath, bytes: repaired.bytes, duration_sec: repaired.durationSec, at: deps.now().toISOString() });
          log.info({ bytes: repaired.bytes, duration_sec: repaired.durationSec, repaired: repaired.repaired }, "recording repaired");
        } catch (err) {
          log.warn({ err }, "recording could not be repaired; storing it as it is");
        }
      }
      recordingBytes = await sizeOf(o.recordingPath);
      const contentType = o.format === "flac" ? "audio/flac" : "audio/wav";
      const fileName = o.pendingFileName ?? recordingFileName(o.sessionId, o.startedAt, contentType);
      await note({ type: "upload_pending", location: fileName, at: deps.now().toISOString() });
      try {
        const stored = await uploadWithRetry(
          deps.store,
          { localPath: o.recordingPath, sessionId: o.sessionId, reference: o.reference, fileName, contentType },
          { logger: deps.logger, signal: deps.signal, ...deps.retry },
        );
        recordingFile = stored.location;
        // `stored` before the delete: a crash in between finds the upload confirmed, not a missing file.
        await note({ type: "stored", location: stored.location, at: deps.now().toISOString() });
        if (stored.deleteLocal) await deleteLocalCopy(o.recordingPath, log);
      } catch (err) {
        if (err instanceof StorageError && err.code === "aborted") throw err;
        const message = err instanceof Error ? err.message : String(err);
        log.error({ err, recording_path: o.recordingPath }, "recording could not be stored; the local copy is kept");
        keepFiles = true;
        status = "error";
        endReason = "error";
        errorMessage = `The recording could not be stored: ${message}. It is kept at ${o.recordingPath}.`;
      }
    }
  } finally {
    await journal?.close();
  }
  const before = await deps.repo.find(o.sessionId);
  await deps.repo.finish(o.sessionId, { status, endReason, errorMessage, recordingFile, recordingBytes: recordingBytes ?? before?.recordingBytes ?? null, endedAt });
  const previous = o.previous ?? (before && before.status !== status ? (before.status as SessionStatus) : null);
  if (previous !== status) {
    await deps.notifier.statusChanged({ sessionId: o.sessionId, reference: o.reference, status, previous, at: endedAt, errorMessage, endReason, recordingFile });
  }
  await deps.notifier.finished({ sessionId: o.sessionId, reference: o.reference, status, previous, endReason, recordingFile, errorMessage, at: endedAt });
  const closing = await openJournal(o.journalPath, { fsync: true }).catch(() => null);
  await closing?.append({ type: "finished", status, end_reason: endReason, at: endedAt.toISOString() }).catch((err: unknown) => log.warn({ err }, "journal finished record failed"));
  await closing?.close();
  if (!keepFiles) for (const dir of o.cleanup) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  log.info({ status, end_reason: endReason, recording_file: recordingFile, recording_bytes: recordingBytes }, "session finished");
}

/** The journal as it stands, for what an earlier writer (the worker, a previous run) recorded. */
async function summaryOf(path: string): Promise<JournalSummary | null> {
  try {
    return summarizeJournal((await readJournal(path)).records);
  } catch {
    return null;
  }
}

/**
 * Makes the session's final status durable before the (possibly long) upload, so a restart while
 * it is pending resumes it with this status instead of calling the session interrupted. The real
 * worker journals its own final status and `recording_closed`; only what is missing is added.
 */
async function noteFinalStatus(o: Outcome, note: (r: JournalRecord) => Promise<void>, summary: JournalSummary | null, now: Date): Promise<void> {
  const at = now.toISOString();
  if (!o.needsRepair && o.recordingPath && summary && !summary.recordingClosed) {
    const bytes = await sizeOf(o.recordingPath);
    if (bytes !== null) await note({ type: "recording_closed", path: o.recordingPath, bytes, at });
  }
  if (summary?.lastStatus === o.status) return;
  await note({
    type: "status",
    status: o.status,
    previous_status: summary?.lastStatus ?? o.previous,
    at,
    end_reason: o.endReason,
    ...(o.errorMessage ? { error_message: o.errorMessage } : {}),
  });
}

/** After a confirmed upload a leftover local file is only logged: the recording is safe. */
async function deleteLocalCopy(path: string, log: Logger): Promise<void> {
  try {
    await unlink(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") log.warn({ err, recording_path: path }, "recording uploaded but the local copy could not be deleted");
  }
}

async function sizeOf(path: string): Promise<number | null> {
  try {
    return (await stat(path)).size;
  } catch {
    return null;
  }
}
