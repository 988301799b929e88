import type { RecordingContentType } from "./recording-store.ts";

const EXTENSIONS: Record<RecordingContentType, string> = { "audio/wav": "wav", "audio/flac": "flac" };

/**
 * Only these characters may reach a file or object name: the name is joined to RECORDINGS_DIR and
 * to object keys, so a `/` or `..` in a session id would write outside the intended place.
 */
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export function isSafeName(name: string): boolean {
  return SAFE_NAME.test(name) && !name.includes("..");
}

function pad(value: number, width = 2): string {
  return String(value).padStart(width, "0");
}

/** `<session_id>_<YYYYMMDD>_<HHMMSS>.<ext>`, the time in UTC (decisions.md, Storage bullet). */
export function recordingFileName(sessionId: string, startedAt: Date, contentType: RecordingContentType): string {
  if (!isSafeName(sessionId)) throw new Error(`session id ${JSON.stringify(sessionId)} cannot be used in a file name`);
  const date = `${pad(startedAt.getUTCFullYear(), 4)}${pad(startedAt.getUTCMonth() + 1)}${pad(startedAt.getUTCDate())}`;
  const time = `${pad(startedAt.getUTCHours())}${pad(startedAt.getUTCMinutes())}${pad(startedAt.getUTCSeconds())}`;
  return `${sessionId}_${date}_${time}.${EXTENSIONS[contentType]}`;
}

/** Object key in the cloud backends: `<session_id>/<fileName>` (recorder-bot.md, "Recording files"). */
export function objectKey(sessionId: string, fileName: string): string {
  assertSafe(sessionId, fileName);
  return `${sessionId}/${fileName}`;
}

export function assertSafe(sessionId: string, fileName: string): void {
  if (!isSafeName(sessionId)) throw new Error(`session id ${JSON.stringify(sessionId)} cannot be used in a file name`);
  if (!isSafeName(fileName)) throw new Error(`file name ${JSON.stringify(fileName)} is not a plain file name`);
}

/**
 * Blob metadata and `x-amz-meta-*` values travel as HTTP headers, which must be ASCII; a meeting
 * `reference` may hold any text, so values are percent-encoded (decode with decodeURIComponent).
 */
export function metadataFor(sessionId: string, reference: string | null): Record<string, string> {
  const metadata: Record<string, string> = { session_id: encodeURIComponent(sessionId) };
  if (reference !== null) metadata.reference = encodeURIComponent(reference);
  return metadata;
}
