/**
 * Startup recovery and worker crash paths with the fake worker (fast, no browser): a journal cut
 * at a random byte never stops the start; an unfinished journal becomes an `interrupted` session
 * (its row rebuilt from the journal) with the repaired recording stored and the webhook sent; a
 * worker that stops answering pings and one that crashes both take the crash path.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { test } from "node:test";
import Database from "better-sqlite3";
import { sessionPaths } from "../../control/bot/paths.ts";
import { freshDatabase } from "../harness/databases.ts";
import { openJournal } from "../../shared/journal/index.ts";
import { MEETING_URL, startBotApp, waitForSession } from "./fixtures/bot-app.ts";
import { hear } from "./fixtures/media.ts";
import { startReceiver } from "./fixtures/receiver.ts";

type Json = Record<string, unknown>;

async function seedSession(dir: string, id: string, cutAt: "random" | "none", when = new Date()): Promise<string> {
  const paths = sessionPaths(dir, id, "wav");
  mkdirSync(paths.sessionDir, { recursive: true });
  // A 3 s tone whose header still says "unknown size", as ffmpeg leaves it when SIGKILLed.
  execFileSync("ffmpeg", ["-loglevel", "error", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=3", "-ac", "2", "-c:a", "pcm_s16le", "-y", paths.recording]);
  const wav = readFileSync(paths.recording);
  wav.writeUInt32LE(0xffffffff, 4);
  wav.writeUInt32LE(0xffffffff, wav.indexOf("data") + 4);
  writeFileSync(paths.recording, wav);
  const journal = await openJournal(paths.journal, { fsync: false });
  const at = when.toISOString();
  await journal.append({ type: "session", session_id: id, meeting_url: MEETING_URL, reference: `seed-${id.slice(0, 4)}`, display_name: "Seed", record: true, format: "wav", recording_path: paths.recording, created_at: at });
  await journal.append({ type: "status", status: "joining", previous_status: null, at });
  await journal.append({ type: "recording_started", path: paths.recording, at });
  await journal.append({ type: "status", status: "recording", previous_status: "joining", at });
  await journal.close();
  if (cutAt === "random") {
    const bytes = readFileSync(paths.journal);
    writeFileSync(paths.journal, bytes.subarray(0, Math.floor(Math.random() * bytes.length)));
  }
  return paths.journal;
}

test("a journal truncated at a random byte does not stop startup", { timeout: 120_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "bot-trunc-"));
  const ids = [randomUUID(), randomUUID(), randomUUID()];
  for (const id of ids) await seedSession(dir, id, "random");
  writeFileSync(join(dir, ".sessions", `${randomUUID()}.journal`), Buffer.from([0xde, 0xad, 0xbe]));
  const app = await startBotApp(t, { recordingsDir: dir });
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  assert.equal((await app.request("GET", "/")).status, 200);
  for (const id of ids) {
    const res = await app.request("GET", `/status/${id}`);
    // Cut before the session record: nothing to rebuild; cut after it: recovered as interrupted.
    assert.ok(res.status === 404 || (res.body as Json).status === "interrupted", JSON.stringify(res.body));
  }
});

// A journal is the recovery's instruction to kill the processes of `.sessions/<id>` and delete it:
// a journal naming another id (`../victim`, `.`) must not aim that at folders beside it.
test("a journal whose session record names another id is skipped; nothing outside its session folder goes", { timeout: 120_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "bot-foreign-"));
  mkdirSync(join(dir, "victim"), { recursive: true });
  mkdirSync(join(dir, ".sessions"), { recursive: true });
  writeFileSync(join(dir, "victim", "keep.txt"), "operator data");
  const at = new Date().toISOString();
  for (const [file, sessionId] of [[randomUUID(), "../victim"], [".", "."], [randomUUID(), randomUUID()]] as const) {
    const journal = await openJournal(join(dir, ".sessions", `${file}.journal`), { fsync: false });
    await journal.append({ type: "session", session_id: sessionId, meeting_url: MEETING_URL, reference: null, display_name: "Seed", record: false, format: "wav", recording_path: null, created_at: at });
    await journal.append({ type: "status", status: "connected", previous_status: "lobby", at });
    await journal.close();
  }
  const app = await startBotApp(t, { recordingsDir: dir });
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  assert.equal((await app.request("GET", "/")).status, 200);
  assert.ok(existsSync(join(dir, "victim", "keep.txt")), "a folder beside .sessions survives");
  assert.ok(existsSync(join(dir, ".sessions")), "the journal folder survives");
  assert.deepEqual((await app.request("GET", "/sessions")).body, { sessions: [], next_cursor: null });
});

test("an unfinished journal is recovered: row rebuilt, recording repaired and stored, webhook sent", { timeout: 120_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "bot-recover-"));
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const id = randomUUID();
  await seedSession(dir, id, "none");
  const app = await startBotApp(t, { recordingsDir: dir, bot: { WEBHOOK_URL: receiver.url } });
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const s = (await app.request("GET", `/status/${id}`)).body as Json;
  assert.equal(s.status, "interrupted");
  assert.equal(s.end_reason, "interrupted");
  const heard = await hear(String(s.recording_file));
  assert.ok(Math.abs(heard.durationSec - 3) < 0.05 && Math.abs(heard.frequency - 440) <= 10, JSON.stringify(heard));
  const hook = await receiver.waitFor((e) => e.session_id === id && e.event === "finished");
  assert.equal(hook.status, "interrupted");
  assert.equal(hook.previous_status, "recording");
  assert.equal(hook.recording_file, s.recording_file);
});

test("a recovered session ended when it was last seen alive, not at the restart: its files' times, else its journal's end", { timeout: 120_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "bot-ended-at-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const now = Date.now();
  const ago = (s: number): Date => new Date(now - s * 1000);
  // Recording: joined 10 min ago, ffmpeg last wrote 2 min ago (the crash), the worker's last
  // heartbeat on the journal 2.5 min ago; the service restarts now.
  const recorded = randomUUID();
  const journalPath = await seedSession(dir, recorded, "none", ago(600));
  utimesSync(journalPath, ago(150), ago(150));
  utimesSync(sessionPaths(dir, recorded, "wav").recording, ago(120), ago(120));
  // Not recording: only the journal's heartbeat tells (touched 3 min ago).
  const quiet = randomUUID();
  const quietPaths = sessionPaths(dir, quiet, "wav");
  mkdirSync(quietPaths.sessionDir, { recursive: true });
  let journal = await openJournal(quietPaths.journal, { fsync: false });
  await journal.append({ type: "session", session_id: quiet, meeting_url: MEETING_URL, reference: null, display_name: "Seed", record: false, format: "wav", recording_path: null, created_at: ago(900).toISOString() });
  await journal.append({ type: "status", status: "connected", previous_status: "joining", at: ago(890).toISOString() });
  await journal.close();
  utimesSync(quietPaths.journal, ago(180), ago(180));
  // Ended before the crash (only its storage was left): its journalled end stands.
  const ended = randomUUID();
  const endedPaths = sessionPaths(dir, ended, "wav");
  mkdirSync(endedPaths.sessionDir, { recursive: true });
  journal = await openJournal(endedPaths.journal, { fsync: false });
  await journal.append({ type: "session", session_id: ended, meeting_url: MEETING_URL, reference: null, display_name: "Seed", record: false, format: "wav", recording_path: null, created_at: ago(700).toISOString() });
  await journal.append({ type: "status", status: "connected", previous_status: "joining", at: ago(690).toISOString() });
  await journal.append({ type: "status", status: "stopped", previous_status: "connected", at: ago(400).toISOString(), end_reason: "stopped_by_api" });
  await journal.close();

  const app = await startBotApp(t, { recordingsDir: dir });
  const endOf = async (id: string): Promise<Json> => (await app.request("GET", `/status/${id}`)).body as Json;
  const near = (iso: unknown, expected: Date, label: string) =>
    assert.ok(Math.abs(Date.parse(String(iso)) - expected.getTime()) < 2_000, `${label}: ended_at ${String(iso)}, expected ${expected.toISOString()}`);
  const r = await endOf(recorded);
  assert.equal(r.status, "interrupted");
  near(r.ended_at, ago(120), "recording");
  const q = await endOf(quiet);
  assert.equal(q.status, "interrupted");
  near(q.ended_at, ago(180), "record false");
  const e = await endOf(ended);
  assert.equal(e.status, "stopped");
  near(e.ended_at, ago(400), "ended before the crash");
});

test("a session that crashed before it got into the call stores no file: the lobby's audio goes with its folder", { timeout: 120_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "bot-lobby-crash-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const id = randomUUID();
  const paths = sessionPaths(dir, id, "wav");
  mkdirSync(paths.sessionDir, { recursive: true });
  execFileSync("ffmpeg", ["-loglevel", "error", "-f", "lavfi", "-i", "anullsrc=r=48000:cl=stereo", "-t", "3", "-c:a", "pcm_s16le", "-y", paths.recording]);
  const journal = await openJournal(paths.journal, { fsync: false });
  const at = new Date().toISOString();
  await journal.append({ type: "session", session_id: id, meeting_url: MEETING_URL, reference: null, display_name: "Seed", record: true, format: "wav", recording_path: paths.recording, created_at: at });
  await journal.append({ type: "status", status: "joining", previous_status: null, at });
  await journal.append({ type: "recording_started", path: paths.recording, at });
  await journal.append({ type: "status", status: "lobby", previous_status: "joining", at });
  await journal.close();
  const app = await startBotApp(t, { recordingsDir: dir, bot: { WEBHOOK_URL: receiver.url } });
  const s = (await app.request("GET", `/status/${id}`)).body as Json;
  assert.equal(s.status, "interrupted");
  assert.equal(s.recording_file, null);
  assert.equal(s.joined_at, null);
  const hook = await receiver.waitFor((e) => e.session_id === id && e.event === "finished");
  assert.equal(hook.recording_file, null);
  await waitForSession(app, id, () => !existsSync(paths.sessionDir), 10_000);
});

test("a crashing worker and a hung worker both end interrupted with their recording", { timeout: 120_000 }, async (t) => {
  const app = await startBotApp(t);
  const crash = await app.request("POST", "/join", { body: { meeting_url: MEETING_URL, display_name: "fake:crash" } });
  const crashId = String(((crash.body as Json).session as Json).session_id);
  const crashed = await waitForSession(app, crashId, (s) => s.status === "interrupted", 30_000);
  assert.ok(crashed.recording_file, "the partial recording is stored");
  assert.ok((await hear(String(crashed.recording_file))).durationSec > 0.5);

  const hang = await app.request("POST", "/join", { body: { meeting_url: MEETING_URL, display_name: "fake:hang" } });
  const hangId = String(((hang.body as Json).session as Json).session_id);
  const hung = await waitForSession(app, hangId, (s) => s.status === "interrupted", 60_000);
  assert.equal(hung.end_reason, "interrupted");
});

test("a row left running without a journal ends interrupted with its status_changed and finished webhooks", { timeout: 120_000 }, async (t) => {
  const database = await freshDatabase("sqlite");
  t.after(() => database.drop());
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const first = await startBotApp(t, { databaseUrl: database.url });
  const join = await first.request("POST", "/join", { body: { meeting_url: MEETING_URL, display_name: "Seed", reference: "no-journal" } });
  const id = String(((join.body as Json).session as Json).session_id);
  await waitForSession(first, id, (s) => s.status === "recording");
  await first.request("POST", `/stop/${id}`);
  await first.close();
  // The state a SIGKILL leaves between the row's insert and the journal's first record.
  const db = new Database(database.url.slice("file:".length));
  db.prepare("UPDATE BotSession SET status = 'recording', endReason = NULL, endedAt = NULL, recordingFile = NULL WHERE id = ?").run(id);
  db.close();
  const second = await startBotApp(t, { databaseUrl: database.url, bot: { WEBHOOK_URL: receiver.url, WEBHOOK_EVENTS: true } });
  assert.equal(((await second.request("GET", `/status/${id}`)).body as Json).status, "interrupted");
  await receiver.waitFor((e) => e.session_id === id && e.event === "finished");
  const mine = receiver.events.filter((e) => e.session_id === id);
  assert.deepEqual(mine.map((e) => [e.event, e.previous_status, e.status, e.end_reason, e.reference]), [
    ["status_changed", "recording", "interrupted", "interrupted", "no-journal"],
    ["finished", "recording", "interrupted", "interrupted", "no-journal"],
  ]);
});
