/**
 * The one way a session ends, for a clean finish, a crashed worker and a recovered journal alike:
 * journal the final status (so a restart keeps it), repair the recording when its ffmpeg was
 * killed, store it under its final name (`upload_pending` before, retried with backoff until it
 * succeeds, `stored` after, only then the local copy deleted), write the outcome to the database,
 * and only then the `finished` webhook; the journal's `finished` record last, so a crash anywhere
 * before it makes the next start redo the rest. A permanent storage failure (credentials, missing
 * container or bucket) ends the session `error` with the store's message and keeps the local file.
 */
import { readdir, rm, stat, unlink } from "node:fs/promises";
import type { Logger } from "../../../shared/log/logger.ts";
import { openJournal, readJournal, summarizeJournal, type JournalRecord, type JournalSummary } from "../../../shared/journal/index.ts";
import type { EndReason, RecordingFormat, SessionStatus } from "../../../shared/journal/records.ts";
import { repairRecording, trimOffsetFromJournal, trimRecording } from "../../../shared/recording/index.ts";
import type { AutomaticLeave } from "../../../shared/session/automatic-leave.ts";
import { recordingFileName, StorageError, uploadWithRetry, type RecordingStore, type RetryOptions } from "../../storage/index.ts";
import type { ErrorCode } from "../../../shared/recording/error-codes.ts";
import type { Notifier } from "../notifier.ts";
import { storeTimeline } from "../timeline/store-timeline.ts";
import type { SessionRepo } from "../session-repo.ts";
import { retryUntilDone } from "./retry.ts";
import type { DiskReserve } from "../disk/reserve.ts";
import { metrics } from "../../metrics/index.ts";

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
  /** The ballast freed when a recording ends on a full disk (control/bot/disk/reserve.ts). */
  diskReserve?: DiskReserve;
  /** Backoff of the final database write and webhook enqueue (default 0.5 s doubling to 30 s). */
  finishRetry?: { minDelayMs?: number; maxDelayMs?: number };
  /** RECORDINGS_DIR/.timelines: stored timelines kept for the timeline route (issue #17). */
  timelineCacheDir?: string;
}

export interface Outcome {
  sessionId: string;
  reference: string | null;
  format: RecordingFormat;
  status: SessionStatus;
  previous: SessionStatus | null;
  endReason: EndReason;
  errorMessage: string | null;
  /** #16: with status `error`; `internal` when none is known. */
  errorCode?: ErrorCode | null;
  /** #16: the session's evidence folder, whose files the `finished` webhook names. */
  evidenceDir?: string | null;
  /** #16: echoed on the `finished` webhook. */
  automaticLeave?: AutomaticLeave | null;
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
  /** The worker's speaker-timeline journal (issue #17); stored beside the recording when present. */
  timelinePath?: string;
  /** Folders of the session to remove once everything is safe. */
  cleanup: string[];
  endedAt?: Date;
}

export async function finalizeSession(deps: FinalizeDeps, outcome: Outcome): Promise<void> {
  const o = await announcedEnd(deps, outcome);
  const log = deps.logger.child({ session_id: o.sessionId });
  const journal = await openJournal(o.journalPath, { fsync: true }).catch((err: unknown) => {
    log.error({ err }, "journal cannot be opened; finishing without it");
    return null;
  });
  /** False when the record did not reach the journal (a full disk): nothing may depend on it. */
  const note = async (record: JournalRecord): Promise<boolean> => {
    if (!journal) return false;
    return journal.append(record).then(
      () => true,
      (err: unknown) => (log.warn({ err, record: record.type }, "journal append failed"), false),
    );
  };
  const endedAt = o.endedAt ?? deps.now();
  let status = o.status;
  let endReason = o.endReason;
  let errorMessage = o.errorMessage;
  let errorCode: ErrorCode | null = o.status === "error" ? (o.errorCode ?? "internal") : null;
  let recordingFile = o.storedLocation ?? null;
  let recordingBytes: number | bigint | null = null;
  let timelineFile: string | null = null;
  // Named after the recording's stored name; a session without one gets the name it would have had.
  let baseName = o.pendingFileName ?? recordingFileName(o.sessionId, o.startedAt, o.format === "flac" ? "audio/flac" : "audio/wav");
  // A recording that could not be stored stays where it is, for an operator to rescue.
  let keepFiles = false;
  try {
    const summary = await summaryOf(o.journalPath);
    await noteFinalStatus({ ...o, errorCode }, note, summary, deps.now());
    // A session that never got into the call stores no file (README, Decisions). The worker drops
    // it on its own way out; after a crash in the lobby ffmpeg's lobby audio is still here, and it
    // goes with the session's folder.
    // Neither the journal nor the row knows of an admission (an unreadable one keeps the file).
    const row = await deps.repo.find(o.sessionId).catch(() => undefined);
    const neverInCall = summary !== null && summary.admittedOffsetSec === null && summary.inCallAt === null && row !== undefined && !row?.joinedAt;
    if (neverInCall && o.recordingPath && !recordingFile) log.info("never in the call: the lobby's audio is not stored");
    const recordingPath = neverInCall ? null : o.recordingPath;
    const present = recordingPath !== null && (await sizeOf(recordingPath)) !== null;
    // The local store may have moved the file just before a crash: its retry finds it in place.
    const movedLocally = recordingPath !== null && !present && !!o.pendingFileName && deps.store.kind === "local";
    if (!recordingFile && recordingPath && (present || movedLocally)) {
      if (o.needsRepair && present) {
        try {
          const repaired = await repairRecording(recordingPath, o.format);
          await note({ type: "recording_repaired", path: recordingPath, bytes: repaired.bytes, duration_sec: repaired.durationSec, at: deps.now().toISOString() });
          log.info({ bytes: repaired.bytes, duration_sec: repaired.durationSec, repaired: repaired.repaired }, "recording repaired");
        } catch (err) {
          log.warn({ err }, "recording could not be repaired; storing it as it is");
        }
      }
      if (present) await trimFromJournal(o, note, log);
      recordingBytes = await sizeOf(recordingPath);
      const contentType = o.format === "flac" ? "audio/flac" : "audio/wav";
      const fileName = o.pendingFileName ?? recordingFileName(o.sessionId, o.startedAt, contentType);
      baseName = fileName;
      await note({ type: "upload_pending", location: fileName, at: deps.now().toISOString() });
      try {
        const stored = await uploadWithRetry(
          deps.store,
          { localPath: recordingPath, sessionId: o.sessionId, reference: o.reference, fileName, contentType },
          { logger: deps.logger, signal: deps.signal, ...deps.retry },
        );
        recordingFile = stored.location;
        // `stored` before the delete: a crash in between finds the upload confirmed, not a missing file.
        const noted = await note({ type: "stored", location: stored.location, at: deps.now().toISOString() });
        // Without `stored` in the journal a crash would find no upload confirmed and no file:
        // the local copy stays (and the folder with it) rather than leave the journal wrong.
        if (stored.deleteLocal && noted) await deleteLocalCopy(recordingPath, log);
        else if (stored.deleteLocal) {
          keepFiles = true;
          log.warn({ recording_path: recordingPath }, "upload confirmed but not journalled; the local copy is kept");
        }
      } catch (err) {
        if (err instanceof StorageError && err.code === "aborted") throw err;
        const message = err instanceof Error ? err.message : String(err);
        log.error({ err, recording_path: recordingPath }, "recording could not be stored; the local copy is kept");
        keepFiles = true;
        status = "error";
        endReason = "error";
        errorCode = storageErrorCode(err);
        errorMessage = `The recording could not be stored: ${message}. It is kept at ${recordingPath}.`;
      }
    }
    if (o.timelinePath && deps.timelineCacheDir) {
      timelineFile = await storeTimeline(deps, {
        sessionId: o.sessionId,
        reference: o.reference,
        journalPath: o.timelinePath,
        recordingFile,
        baseName,
        endedAt,
        cacheDir: deps.timelineCacheDir,
        trimmed: await headCut(o.journalPath),
      });
    }
  } finally {
    await journal?.close();
  }
  // The final write and the webhooks are retried at once when they fail (not at the next start,
  // which would leave the row running and its reference locked until then).
  const retry = { log, signal: deps.signal, ...deps.finishRetry };
  const before = await retryUntilDone(() => deps.repo.find(o.sessionId), { ...retry, what: "reading the session" });
  await retryUntilDone(
    (attempt) =>
      deps.repo.finish(o.sessionId, {
        status,
        endReason,
        errorMessage,
        errorCode,
        recordingFile,
        // From the third attempt without the size, in case the value itself is what fails.
        recordingBytes: attempt >= 3 ? null : (recordingBytes ?? before?.recordingBytes ?? null),
        endedAt,
        timelineFile,
      }),
    { ...retry, what: "the final write of the session" },
  );
  metrics.sessionFinished({ status, endReason, errorCode: errorCode ?? null, createdAt: before?.createdAt ?? null, endedAt });
  const previous = o.previous ?? (before && before.status !== status ? (before.status as SessionStatus) : null);
  if (previous !== status) {
    const changed = { sessionId: o.sessionId, reference: o.reference, status, previous, at: endedAt, errorMessage, errorCode, endReason, recordingFile };
    await retryUntilDone(() => deps.notifier.statusChanged(changed), { ...retry, what: "the status_changed webhook" });
  }
  const evidenceFiles = o.evidenceDir ? (await readdir(o.evidenceDir).catch(() => [] as string[])).filter((n) => !n.startsWith(".")).sort() : [];
  const finished = { sessionId: o.sessionId, reference: o.reference, status, previous, endReason, recordingFile, errorMessage, errorCode, evidenceFiles, automaticLeave: o.automaticLeave ?? null, at: endedAt, timelineFile };
  await retryUntilDone(() => deps.notifier.finished(finished), { ...retry, what: "the finished webhook" });
  const closing = await openJournal(o.journalPath, { fsync: true }).catch(() => null);
  await closing?.append({ type: "finished", status, end_reason: endReason, at: endedAt.toISOString() }).catch((err: unknown) => log.warn({ err }, "journal finished record failed"));
  await closing?.close();
  if (!keepFiles) for (const dir of o.cleanup) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  log.info({ status, end_reason: endReason, recording_file: recordingFile, recording_bytes: recordingBytes }, "session finished");
}

/**
 * Cluster mode (#19): an end another instance announced (`instance_lost`, control/cluster/takeover.ts)
 * stands, whoever ends the session later (its owner back from a cut-off, control/cluster/fence.ts,
 * or its next start): `interrupted` at the announced time, no second `status_changed`; the
 * recording is still stored and the one `finished` webhook sent.
 */
async function announcedEnd(deps: FinalizeDeps, o: Outcome): Promise<Outcome> {
  const row = await deps.repo.find(o.sessionId).catch(() => undefined);
  if (row?.endReason !== "instance_lost") return o;
  return { ...o, status: "interrupted", previous: "interrupted", endReason: "instance_lost", errorMessage: null, errorCode: null, endedAt: row.endedAt ?? o.endedAt };
}

/**
 * Cuts the head up to the admission, as the journal places it, on every path: the worker cuts a
 * WAV itself (a header rewrite), a FLAC is cut here after the worker has reported, and a recording
 * repaired after a crash is cut here too. A failed cut keeps the whole file.
 */
async function trimFromJournal(o: Outcome, note: (r: JournalRecord) => Promise<unknown>, log: Logger): Promise<void> {
  if (!o.recordingPath) return;
  const summary = await summaryOf(o.journalPath);
  const offsetSec = summary ? trimOffsetFromJournal(summary) : null;
  if (offsetSec === null) return;
  try {
    const trimmed = await trimRecording(o.recordingPath, o.format, offsetSec);
    if (trimmed.failed) {
      log.warn({ reason: trimmed.failed, offset_sec: offsetSec }, "recording could not be trimmed to the admission; storing it whole");
      return;
    }
    const bytes = (await sizeOf(o.recordingPath)) ?? 0;
    await note({ type: "recording_trimmed", path: o.recordingPath, offset_sec: offsetSec, bytes, at: new Date().toISOString() });
    log.info({ offset_sec: offsetSec, bytes }, "recording trimmed to the admission");
  } catch (err) {
    log.warn({ err, offset_sec: offsetSec }, "recording could not be trimmed to the admission; storing it whole");
  }
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
async function noteFinalStatus(o: Outcome, note: (r: JournalRecord) => Promise<unknown>, summary: JournalSummary | null, now: Date): Promise<void> {
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
    ...(o.errorCode ? { error_code: o.errorCode } : {}),
  });
}

/** A full disk is `disk_full`; any other failure to store the recording `storage_failed`. */
function storageErrorCode(err: unknown): ErrorCode {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOSPC" || code === "EDQUOT" || /\bENOSPC\b|no space left/i.test((e as Error).message ?? "")) return "disk_full";
  }
  return "storage_failed";
}

/**
 * The stored file starts at the admission (less the margin), so the timeline counts from there:
 * someone cut its head (`recording_trimmed`: the worker, or this finalize after a repair), or the
 * worker closed it itself (`recording_closed` with bytes and no repair: it trims as it closes),
 * even if it died before writing the timeline's final clock.
 */
async function headCut(path: string): Promise<boolean> {
  try {
    const records = (await readJournal(path)).records;
    if (records.some((r) => r.type === "recording_trimmed")) return true;
    return records.some((r) => r.type === "recording_closed" && r.bytes > 0) && !records.some((r) => r.type === "recording_repaired");
  } catch {
    return false;
  }
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
