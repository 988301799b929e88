/**
 * Where a session's files live under RECORDINGS_DIR: the journal in `.sessions` (recorder-bot.md),
 * the recording in progress in `.sessions/<id>/`, the worker's private folder (PulseAudio,
 * Chromium profile) in `.sessions/<id>.work`. Every path carries the session id, which is how
 * orphans of a crashed run are found in /proc.
 */
import { join, resolve } from "node:path";
import { JOURNAL_DIR_NAME, journalPath } from "../../shared/journal/index.ts";
import { TIMELINE_JOURNAL_NAME } from "../../shared/timeline/index.ts";
import type { RecordingFormat } from "../../shared/journal/records.ts";

export interface SessionPaths {
  journalDir: string;
  journal: string;
  sessionDir: string;
  recording: string;
  workDir: string;
  /** The speaker timeline's journal, written by the worker's observer (shared/timeline). */
  timeline: string;
}

export function journalDirOf(recordingsDir: string): string {
  return join(resolve(recordingsDir), JOURNAL_DIR_NAME);
}

export function sessionPaths(recordingsDir: string, sessionId: string, format: RecordingFormat): SessionPaths {
  const journalDir = journalDirOf(recordingsDir);
  const sessionDir = join(journalDir, sessionId);
  return {
    journalDir,
    journal: journalPath(journalDir, sessionId),
    sessionDir,
    recording: join(sessionDir, `recording.${format}`),
    workDir: join(journalDir, `${sessionId}.work`),
    timeline: join(sessionDir, TIMELINE_JOURNAL_NAME),
  };
}

/** #16: a session's evidence (screenshots, page HTML, console, steps.json). */
export const evidenceRootOf = (recordingsDir: string): string => join(resolve(recordingsDir), ".evidence");
export const evidenceDirOf = (recordingsDir: string, sessionId: string): string => join(evidenceRootOf(recordingsDir), sessionId);
/** Stored timelines kept for `GET /sessions/{id}/timeline` whatever the storage backend (issue #17). */
export const timelineCacheDirOf = (recordingsDir: string): string => join(resolve(recordingsDir), ".timelines");

/**
 * V8's code for the modules a worker loads (NODE_COMPILE_CACHE), shared by every worker of this
 * Node version; here because RECORDINGS_DIR is the one folder the service may always write.
 */
export const compileCacheDirOf = (recordingsDir: string): string => join(resolve(recordingsDir), ".compile-cache");

export const webhookDirOf = (recordingsDir: string): string => join(resolve(recordingsDir), ".webhooks");
