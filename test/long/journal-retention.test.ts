/**
 * Issue #15 "Nothing grows without bound": the journal of a finished session is removed once
 * JOURNAL_RETENTION_DAYS have passed since its `finished` record; a recent one stays, and an
 * unfinished one is never removed (the start recovers it instead).
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { sessionPaths } from "../../control/bot/paths.ts";
import { openJournal } from "../../shared/journal/index.ts";
import { MEETING_URL, startBotApp } from "../bot/fixtures/bot-app.ts";

const DAY = 86_400_000;

async function seed(dir: string, ageMs: number, finished: boolean): Promise<string> {
  const id = randomUUID();
  const paths = sessionPaths(dir, id, "wav");
  mkdirSync(paths.journalDir, { recursive: true });
  const at = new Date(Date.now() - ageMs).toISOString();
  const j = await openJournal(paths.journal, { fsync: false });
  await j.append({ type: "session", session_id: id, meeting_url: MEETING_URL, reference: null, display_name: "Old", record: false, format: "wav", recording_path: null, created_at: at });
  await j.append({ type: "status", status: "connected", previous_status: "joining", at });
  if (finished) {
    await j.append({ type: "status", status: "stopped", previous_status: "connected", at, end_reason: "alone" });
    await j.append({ type: "finished", status: "stopped", end_reason: "alone", at });
  }
  await j.close();
  return paths.journal;
}

test("finished journals past JOURNAL_RETENTION_DAYS go; recent and unfinished ones stay", { timeout: 60_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "i15-retention-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const old = await seed(dir, 10 * DAY, true);
  const recent = await seed(dir, DAY, true);
  const unfinished = await seed(dir, 10 * DAY, false);
  await startBotApp(t, { recordingsDir: dir, bot: { JOURNAL_RETENTION_DAYS: 7 } });
  for (let i = 0; i < 50 && existsSync(old); i++) await new Promise((r) => setTimeout(r, 100));
  assert.equal(existsSync(old), false, "the old finished journal was removed");
  assert.equal(existsSync(recent), true, "a journal within its retention stays");
  assert.equal(existsSync(unfinished), true, "an unfinished journal is recovered, not removed");
});
