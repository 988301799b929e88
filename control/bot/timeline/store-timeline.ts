/**
 * The speaker timeline's way into storage (issue #17), one step of every session's end
 * (supervisor/finalize.ts: clean finish, crashed worker, recovered journal alike): built from the
 * worker's timeline journal, kept in RECORDINGS_DIR/.timelines for the timeline route, and stored
 * through the recording's backend under the recording's base name with `.timeline.json`.
 * A session that never got into the call has no timeline. A timeline that cannot be stored is
 * logged and left out (`timeline_file` null): it must not cost the session its recording.
 */
import { mkdir, unlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { Logger } from "../../../shared/log/logger.ts";
import { writeFileDurably } from "../../../shared/journal/index.ts";
import { buildTimeline, readTimelineJournal, timelineFileNameFor, type Timeline } from "../../../shared/timeline/index.ts";
import { StorageError, uploadWithRetry, type RecordingStore, type RetryOptions } from "../../storage/index.ts";

export interface StoreTimelineInput {
  sessionId: string;
  reference: string | null;
  /** The worker's timeline journal. */
  journalPath: string;
  /** Where the recording went (its location), null when nothing was recorded or stored. */
  recordingFile: string | null;
  /** The recording's stored file name (`<id>_<YYYYMMDD>_<HHMMSS>.<ext>`): the timeline's base name. */
  baseName: string;
  endedAt: Date;
  cacheDir: string;
  /** The worker closed the recording itself (`recording_closed`): the file was trimmed. */
  trimmed: boolean;
}

export interface TimelineDeps {
  store: RecordingStore;
  logger: Logger;
  signal?: AbortSignal;
  retry?: Pick<RetryOptions, "minDelayMs" | "maxDelayMs">;
}

export const timelineCachePath = (cacheDir: string, sessionId: string): string => join(cacheDir, `${sessionId}.json`);

/** Returns the stored timeline's location, or null when there is none to store (or storing failed). */
export async function storeTimeline(deps: TimelineDeps, input: StoreTimelineInput): Promise<string | null> {
  const log = deps.logger.child({ session_id: input.sessionId });
  const records = await readTimelineJournal(input.journalPath).catch((err: unknown) => {
    log.warn({ err }, "timeline journal unreadable");
    return [];
  });
  if (!records.some((r) => r.type === "clock")) return null;
  const timeline: Timeline = buildTimeline({
    sessionId: input.sessionId,
    reference: input.reference,
    recordingFile: input.recordingFile,
    records,
    mode: "final",
    now: input.endedAt.getTime(),
    trimmed: input.trimmed,
  });
  const body = `${JSON.stringify(timeline, null, 2)}\n`;
  await mkdir(input.cacheDir, { recursive: true });
  await writeFileDurably(timelineCachePath(input.cacheDir, input.sessionId), body, 0o640);
  const fileName = timelineFileNameFor(input.baseName);
  // Written beside the journal: the local store moves it into RECORDINGS_DIR, a remote one uploads it.
  const localPath = join(dirname(input.journalPath), fileName);
  await writeFileDurably(localPath, body, 0o640);
  try {
    const stored = await uploadWithRetry(
      deps.store,
      { localPath, sessionId: input.sessionId, reference: input.reference, fileName, contentType: "application/json" },
      { logger: deps.logger, signal: deps.signal, ...deps.retry },
    );
    if (stored.deleteLocal) await unlink(localPath).catch(() => undefined);
    log.info({ timeline_file: stored.location, participants: timeline.participants.length, turns: timeline.speech.length }, "timeline stored");
    return stored.location;
  } catch (err) {
    if (err instanceof StorageError && err.code === "aborted") throw err;
    log.error({ err }, "the speaker timeline could not be stored; it stays served by the timeline route");
    return null;
  }
}
