import { rm } from "node:fs/promises";
import type { InitMessage } from "../../shared/ipc/messages.ts";
import type { Journal } from "../../shared/journal/index.ts";
import type { Logger } from "../../shared/log/logger.ts";
import type { Media } from "./media.ts";
import { trimHead } from "./trim.ts";

/**
 * How much of the file before the detected admission is kept. What a participant hears starts
 * with the call view (the meeting's audio connects once the page is in the call), and the
 * adapter detects that view within one probe (250-500 ms). Measured against the fixture in
 * test/worker/recording.test.ts: the call's tone began between 0.05 s before and 0.4 s after
 * the detection, while the server-side admission came 0.3-1.05 s before it (the page was still
 * switching). Half a second keeps every heard sample and little of the lobby's silence.
 */
export const ADMISSION_MARGIN_MS = 500;

export interface ClosedRecording {
  path: string;
  bytes: number;
}

export interface CloseRecordingOptions {
  init: InitMessage;
  media: Media;
  admittedAt: number | null;
  journal: Journal;
  logger: Logger;
}

/**
 * Stops ffmpeg cleanly and keeps what was heard from admission to leaving. A session that never
 * got into the call has nothing anyone heard (the file holds the join and the lobby wait): the
 * file is removed and no recording reported.
 */
export async function closeRecording(options: CloseRecordingOptions): Promise<ClosedRecording | null> {
  const { init, media, admittedAt, journal, logger } = options;
  const stopped = await media.stopRecorder();
  if (!stopped) return null;
  const path = init.recordingPath;
  if (!stopped.clean) logger.warn({ path }, "ffmpeg did not exit cleanly; the recording may need repair");

  if (admittedAt === null) {
    await rm(path, { force: true });
    await journal.append({ type: "recording_closed", path, bytes: 0, at: new Date().toISOString() }).catch(() => undefined);
    logger.info({ path }, "never admitted: recording discarded");
    return null;
  }
  const openedAt = media.recordingOpenedAt ?? admittedAt;
  const offsetSec = Math.max(0, admittedAt - ADMISSION_MARGIN_MS - openedAt) / 1000;
  const bytes = await trimHead({ path, format: init.format, offsetSec, logger });
  await journal.append({ type: "recording_closed", path, bytes, at: new Date().toISOString() }).catch((err: unknown) => {
    logger.error({ err }, "could not journal the closed recording");
  });
  logger.info({ path, bytes, offsetSec }, "recording closed");
  return { path, bytes };
}
