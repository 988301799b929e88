/**
 * When a session that a crash ended was last known to run, for its `ended_at` (and so its
 * `duration_seconds`): the time the service was down is not part of it. The latest of what its
 * journal holds and of its files' modification times: ffmpeg writes the recording all along and
 * the worker touches its journal every few seconds (worker/session/heartbeat.ts), so the answer
 * is within seconds of the crash. Never later than now, never earlier than the journal's last
 * record.
 */
import { stat } from "node:fs/promises";

export async function lastAlive(files: readonly (string | null)[], journalAt: string | null, now: Date): Promise<Date> {
  const times = await Promise.all(
    files.map((file) => (file ? stat(file).then((s) => s.mtimeMs, () => Number.NaN) : Number.NaN)),
  );
  const journal = journalAt ? Date.parse(journalAt) : Number.NaN;
  const latest = Math.max(...[journal, ...times].filter((t) => Number.isFinite(t)));
  return Number.isFinite(latest) ? new Date(Math.min(latest, now.getTime())) : now;
}
