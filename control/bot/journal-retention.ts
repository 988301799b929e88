/**
 * Journals of finished sessions are removed once their retention has passed (issue #15 "Nothing
 * grows without bound"): `RECORDINGS_DIR/.sessions` keeps a finished journal for
 * JOURNAL_RETENTION_DAYS (default 7) after its `finished` record, for an operator to read, then
 * deletes it. An unfinished journal is never removed: the next start recovers it. Swept at start
 * and every hour.
 */
import { unlink } from "node:fs/promises";
import { listJournals, readJournal } from "../../shared/journal/index.ts";
import type { Logger } from "../../shared/log/logger.ts";
import { journalDirOf } from "./paths.ts";

const SWEEP_INTERVAL_MS = 60 * 60 * 1000;

export async function sweepFinishedJournals(recordingsDir: string, retentionMs: number, now: Date, logger: Logger): Promise<string[]> {
  const removed: string[] = [];
  for (const entry of await listJournals(journalDirOf(recordingsDir)).catch(() => [])) {
    try {
      const { records } = await readJournal(entry.path);
      const finished = records.findLast((r) => r.type === "finished");
      if (!finished || now.getTime() - Date.parse(finished.at) < retentionMs) continue;
      await unlink(entry.path);
      removed.push(entry.sessionId);
    } catch (err) {
      logger.warn({ err, path: entry.path }, "journal retention: could not check or remove a journal");
    }
  }
  if (removed.length > 0) logger.info({ sessions: removed.length }, "removed journals of finished sessions past their retention");
  return removed;
}

/** Sweeps now and every hour; returns the stop function. */
export function startJournalRetention(recordingsDir: string, retentionMs: number, now: () => Date, logger: Logger): () => void {
  const sweep = () => void sweepFinishedJournals(recordingsDir, retentionMs, now(), logger);
  sweep();
  const timer = setInterval(sweep, SWEEP_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
