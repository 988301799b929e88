import type { EndReason, JournalRecord, SessionRecord, SessionStatus } from "./records.ts";

/** What recovery needs to know about a session from its journal. */
export interface JournalSummary {
  session: SessionRecord | null;
  /** A `finished` record was written: the session needs no recovery. */
  finished: boolean;
  /** Final status from the `finished` record, else the last `status` record, else null. */
  lastStatus: SessionStatus | null;
  endReason: EndReason | null;
  errorMessage: string | null;
  /** The status record's `error_code` (#16), null when none was journalled. */
  errorCode: string | null;
  /** Recording path from `recording_started`, else the one planned in the `session` record. */
  recordingPath: string | null;
  recordingStarted: boolean;
  /** ffmpeg exited cleanly (`recording_closed`) or recovery repaired it (`recording_repaired`). */
  recordingClosed: boolean;
  recordingBytes: number | null;
  /** When ffmpeg opened its input (wall clock of `recording_started`). */
  recordingStartedAt: string | null;
  /** Wall clock of the first `recording`/`connected` status (a fallback for journals without `admitted`). */
  inCallAt: string | null;
  /** Admission's place in the recording from the `admitted` record (monotonic clock). */
  admittedOffsetSec: number | null;
  /** A `recording_trimmed` record: the head is already cut. */
  trimmed: boolean;
  /** An upload (or local store) was planned here but not confirmed by `stored`. */
  uploadPending: string | null;
  /** Where the recording was stored, from the last `stored` record. */
  storedLocation: string | null;
  /** Wall clock of the last `status` record: when a session that ended before a crash ended. */
  lastStatusAt: string | null;
  /** The latest wall clock any record holds (the session's `created_at` at least). */
  lastRecordAt: string | null;
}

export function summarizeJournal(records: readonly JournalRecord[]): JournalSummary {
  const summary: JournalSummary = {
    session: null,
    finished: false,
    lastStatus: null,
    endReason: null,
    errorMessage: null,
    errorCode: null,
    recordingPath: null,
    recordingStarted: false,
    recordingClosed: false,
    recordingBytes: null,
    recordingStartedAt: null,
    inCallAt: null,
    admittedOffsetSec: null,
    trimmed: false,
    uploadPending: null,
    storedLocation: null,
    lastStatusAt: null,
    lastRecordAt: null,
  };
  for (const record of records) {
    const at = record.type === "session" ? record.created_at : record.at;
    if (summary.lastRecordAt === null || Date.parse(at) > Date.parse(summary.lastRecordAt)) summary.lastRecordAt = at;
    switch (record.type) {
      case "session":
        summary.session = record;
        summary.recordingPath ??= record.recording_path;
        break;
      case "status":
        summary.lastStatus = record.status;
        summary.lastStatusAt = record.at;
        if (record.end_reason !== undefined) summary.endReason = record.end_reason;
        if (record.error_message !== undefined) summary.errorMessage = record.error_message;
        if (record.error_code !== undefined) summary.errorCode = record.error_code;
        if (record.status === "recording" || record.status === "connected") summary.inCallAt ??= record.at;
        break;
      case "recording_started":
        summary.recordingStarted = true;
        summary.recordingPath = record.path;
        summary.recordingStartedAt = record.at;
        break;
      case "admitted":
        summary.admittedOffsetSec = record.recording_offset_sec;
        break;
      case "recording_trimmed":
        summary.trimmed = true;
        summary.recordingPath = record.path;
        summary.recordingBytes = record.bytes;
        break;
      case "recording_closed":
      case "recording_repaired":
        summary.recordingClosed = true;
        summary.recordingPath = record.path;
        summary.recordingBytes = record.bytes;
        break;
      case "upload_pending":
        summary.uploadPending = record.location;
        break;
      case "stored":
        summary.storedLocation = record.location;
        summary.uploadPending = null;
        break;
      case "finished":
        summary.finished = true;
        summary.lastStatus = record.status;
        summary.endReason = record.end_reason;
        break;
    }
  }
  return summary;
}
