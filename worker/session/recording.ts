import { rm, stat } from "node:fs/promises";
import type { InitMessage } from "../../shared/ipc/messages.ts";
import type { Journal } from "../../shared/journal/index.ts";
import type { Logger } from "../../shared/log/logger.ts";
import { repairWav, trimOffsetFor, trimWavHead } from "../../shared/recording/index.ts";
import type { Media } from "./media.ts";

export interface ClosedRecording {
  path: string;
  bytes: number;
  /** Epoch ms of the file's first sample (after the trim): offset 0 of the speaker timeline. */
  firstSampleAt: number;
}

export interface CloseRecordingOptions {
  init: InitMessage;
  media: Media;
  /** performance.now() of the admission (monotonic, like `media.recordingOpenedAt`). */
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
  const offsetSec = trimOffsetFor((admittedAt - openedAt) / 1000);
  const settled = await settleRecording({ path, format: init.format, offsetSec, clean: stopped.clean, journal, logger });
  // The timeline (worker/observe) runs on the wall clock, as the page's own samples do.
  const openedWall = media.recordingOpenedWall ?? Date.now() - (performance.now() - openedAt);
  return { ...settled, firstSampleAt: openedWall + offsetSec * 1000 };
}

/**
 * The closed file's last step in the worker, bounded whatever its length: a WAV is cut at the
 * admission by a header rewrite (shared/recording/trim-wav.ts, two small writes); a FLAC, which
 * needs a re-encode, is cut by the supervisor after `finished` (it reads the `admitted` record),
 * so a long recording never holds up the stop. `recording_closed` then `recording_trimmed`.
 */
export async function settleRecording(o: { path: string; format: InitMessage["format"]; offsetSec: number; clean: boolean; journal: Journal; logger: Logger }): Promise<{ path: string; bytes: number }> {
  const { path, journal, logger } = o;
  if (o.format === "wav" && !o.clean) await repairWav(path).catch((err: unknown) => logger.warn({ err }, "the recording's header could not be repaired"));
  const bytes = await size(path);
  await journal.append({ type: "recording_closed", path, bytes, at: new Date().toISOString() }).catch((err: unknown) => {
    logger.error({ err }, "could not journal the closed recording");
  });
  if (o.format === "wav" && o.offsetSec > 0) {
    try {
      const trimmed = await trimWavHead(path, o.offsetSec);
      await journal.append({ type: "recording_trimmed", path, offset_sec: o.offsetSec, bytes, at: new Date().toISOString() });
      logger.info({ offsetSec: o.offsetSec, durationSec: trimmed.durationSec }, "recording trimmed to the admission");
    } catch (err) {
      logger.warn({ err }, "trimming the recording failed; the supervisor tries again");
    }
  }
  logger.info({ path, bytes, offsetSec: o.offsetSec }, "recording closed");
  return { path, bytes };
}

async function size(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch {
    return 0;
  }
}
