/**
 * The cut at the admission, the same on every path (a clean stop, a killed worker, a restart):
 * the worker journals where in the file the bot got into the call (`admitted`, measured on a
 * monotonic clock, so a wall-clock step cannot move it); whoever closes the file cuts everything
 * before that point less a margin, and journals `recording_trimmed` so nobody cuts twice.
 */
import type { JournalSummary, RecordingFormat } from "../journal/index.ts";
import { flacTrimBudgetMs, trimFlacHead } from "./trim-flac.ts";
import { trimWavHead } from "./trim-wav.ts";

/**
 * How much of the file before the detected admission is kept. What a participant hears starts
 * with the call view, which the adapter detects within one probe; measured against the fixture
 * (test/worker/recording.test.ts) the call's tone began between 0.05 s before and 0.4 s after
 * the detection. Half a second keeps every heard sample and little of the lobby's silence.
 */
export const ADMISSION_MARGIN_SEC = 0.5;
/** Below this there is nothing worth cutting. */
const MIN_TRIM_SEC = 0.05;

/** The cut from an admission's place in the file. */
export function trimOffsetFor(admittedOffsetSec: number): number {
  return Math.max(0, admittedOffsetSec - ADMISSION_MARGIN_SEC);
}

/**
 * Where to cut, from the journal: the `admitted` record; for journals written before it existed,
 * the wall-clock gap between `recording_started` and the first in-call status. Null: no cut
 * (never admitted, or already trimmed).
 */
export function trimOffsetFromJournal(summary: JournalSummary): number | null {
  if (summary.trimmed) return null;
  if (summary.admittedOffsetSec !== null) return trimOffsetFor(summary.admittedOffsetSec);
  if (summary.recordingStartedAt && summary.inCallAt) {
    const gap = (Date.parse(summary.inCallAt) - Date.parse(summary.recordingStartedAt)) / 1000;
    if (Number.isFinite(gap) && gap >= 0) return trimOffsetFor(gap);
  }
  return null;
}

export interface TrimOutcome {
  changed: boolean;
  bytes: number;
  failed: string | null;
}

/** Cuts the head of a closed (or repaired) recording; a failure leaves it whole and says why. */
export async function trimRecording(path: string, format: RecordingFormat, offsetSec: number, options: { budgetMs?: number } = {}): Promise<TrimOutcome> {
  if (offsetSec < MIN_TRIM_SEC) return { changed: false, bytes: 0, failed: null };
  if (format === "wav") {
    const r = await trimWavHead(path, offsetSec);
    return { changed: r.changed, bytes: r.bytes, failed: null };
  }
  return trimFlacHead(path, offsetSec, options);
}

export { flacTrimBudgetMs };
