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
  /** Recording path from `recording_started`, else the one planned in the `session` record. */
  recordingPath: string | null;
  recordingStarted: boolean;
  /** ffmpeg exited cleanly (`recording_closed`) or recovery repaired it (`recording_repaired`). */
  recordingClosed: boolean;
  recordingBytes: number | null;
  /** An upload (or local store) was planned here but not confirmed by `stored`. */
  uploadPending: string | null;
  /** Where the recording was stored, from the last `stored` record. */
  storedLocation: string | null;
}

export function summarizeJournal(records: readonly JournalRecord[]): JournalSummary {
  const summary: JournalSummary = {
    session: null,
    finished: false,
    lastStatus: null,
    endReason: null,
    errorMessage: null,
    recordingPath: null,
    recordingStarted: false,
    recordingClosed: false,
    recordingBytes: null,
    uploadPending: null,
    storedLocation: null,
  };
  for (const record of records) {
    switch (record.type) {
      case "session":
        summary.session = record;
        summary.recordingPath ??= record.recording_path;
        break;
      case "status":
        summary.lastStatus = record.status;
        if (record.end_reason !== undefined) summary.endReason = record.end_reason;
        if (record.error_message !== undefined) summary.errorMessage = record.error_message;
        break;
      case "recording_started":
        summary.recordingStarted = true;
        summary.recordingPath = record.path;
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
