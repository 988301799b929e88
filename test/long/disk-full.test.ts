/**
 * Issue #15 "Disk safety", a disk that fills during a recording: the real worker against the
 * Teams fixture, RECORDINGS_DIR a tmpfs the test fills once the bot records. ffmpeg hits ENOSPC;
 * the session ends `error` with errorCode `disk_full`, what was recorded so far is repaired and
 * kept under its final name, the journal ends with `finished`, and the `finished` webhook (through
 * the outbox on the same full disk) arrives.
 */
import assert from "node:assert/strict";
import { readFileSync, rmSync } from "node:fs";
import { test } from "node:test";
import Database from "better-sqlite3";
import { sessionPaths } from "../../control/bot/paths.ts";
import { readJournal, summarizeJournal } from "../../shared/journal/index.ts";
import { freshDatabase } from "../harness/databases.ts";
import { eventually } from "../harness/eventually.ts";
import { holdMediaLock } from "../harness/media-lock.ts";
import { startTeamsFixture } from "../fixture/teams/server.ts";
import { readWav } from "../helpers/audio/wav.ts";
import { startBotApp, waitForSession } from "../bot/fixtures/bot-app.ts";
import { startReceiver } from "../bot/fixtures/receiver.ts";
import { fillUntil, mountTmpfs } from "./tmpfs.ts";

await holdMediaLock();

type Json = Record<string, unknown>;

test("ENOSPC mid-recording: error disk_full, the recording repaired and kept, journal and finished webhook intact", { timeout: 300_000 }, async (t) => {
  const dir = mountTmpfs(t, 300);
  if (!dir) return;
  const database = await freshDatabase("sqlite");
  t.after(() => database.drop());
  const fixture = await startTeamsFixture();
  t.after(() => fixture.close());
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const app = await startBotApp(t, {
    worker: "real",
    recordingsDir: dir,
    databaseUrl: database.url,
    bot: { MEETING_ALLOWED_HOSTS: fixture.hostPort, WEBHOOK_URL: receiver.url, MAX_RECORDING_MINUTES: 2, MEETING_WAIT_FOR_LOBBY: 1, MIN_FREE_DISK_MB: 1 },
  });
  const meeting = fixture.createMeeting({ lobby: false, tone: { frequency: 440 } });
  const join = await app.request("POST", "/join", { body: { meeting_url: meeting.joinUrl, display_name: "Disk Bot", reference: "disk-full" } });
  assert.equal(join.status, 200, JSON.stringify(join.body));
  const id = String(((join.body as Json).session as Json).session_id);
  await waitForSession(app, id, (s) => s.status === "recording", 120_000);
  await new Promise((r) => setTimeout(r, 2_000));
  // ~1.5 s of WAV left (192 kB/s): ffmpeg fails within seconds.
  const filler = fillUntil(dir, 300);
  const s = await waitForSession(app, id, (x) => x.status !== "recording", 120_000);
  assert.equal(s.status, "error", JSON.stringify(s));
  assert.match(String(s.error_message), /disk .*full/i);
  const db = new Database(database.url.slice("file:".length), { readonly: true });
  const row = db.prepare("SELECT errorCode FROM BotSession WHERE id = ?").get(id) as { errorCode: string | null };
  db.close();
  assert.equal(row.errorCode, "disk_full");

  const file = String(s.recording_file);
  assert.ok(file.startsWith(dir), `kept under RECORDINGS_DIR: ${file}`);
  const head = readFileSync(file).subarray(0, 64);
  assert.notEqual(head.readUInt32LE(4), 0xffffffff, "the RIFF size was repaired");
  const wav = await readWav(file);
  assert.ok(wav.durationSec > 1, `kept ${wav.durationSec} s`);

  const hook = await receiver.waitFor((e) => e.session_id === id && e.event === "finished");
  assert.equal(hook.status, "error");
  assert.equal(hook.recording_file, file);
  // The journal's `finished` record is written after the webhook is delivered (finalize.ts): wait for it.
  const journal = sessionPaths(dir, id, "wav").journal;
  const summary = async () => summarizeJournal((await readJournal(journal)).records);
  await eventually(async () => (await summary()).finished, "the journal's finished record", 15_000);
  assert.equal((await summary()).lastStatus, "error");
  rmSync(filler, { force: true });
});
