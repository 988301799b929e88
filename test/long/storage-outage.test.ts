/**
 * Issue #15 "Storage outages stay storage outages": with the object store down, a session whose
 * worker has ended gives its slot back at once (MAX_CONCURRENT_SESSIONS 1 and a second /join is
 * taken), says `recording_pending` while its upload retries in the background, and ends `stopped`
 * with the stored location once the store is back. A permanent error (a bucket that does not
 * exist) ends `error` with errorCode `storage_failed`, the local file kept and named. Fake
 * worker, real s3rver on loopback.
 */
import assert from "node:assert/strict";
import { access, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import Database from "better-sqlite3";
import { freshDatabase } from "../harness/databases.ts";
import { freePort, S3RVER_KEY, startS3rver } from "../storage/emulators.ts";
import { MEETING_URL, startBotApp, waitForSession } from "../bot/fixtures/bot-app.ts";

type Json = Record<string, unknown>;
const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
process.env.AWS_ACCESS_KEY_ID = S3RVER_KEY;
process.env.AWS_SECRET_ACCESS_KEY = S3RVER_KEY;
after(() => {
  for (const [k, v] of [["AWS_ACCESS_KEY_ID", saved.id], ["AWS_SECRET_ACCESS_KEY", saved.secret]] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

async function recordAndStop(app: Awaited<ReturnType<typeof startBotApp>>, name: string): Promise<string> {
  const join = await app.request("POST", "/join", { body: { meeting_url: MEETING_URL, display_name: name } });
  assert.equal(join.status, 200, JSON.stringify(join.body));
  const id = String(((join.body as Json).session as Json).session_id);
  await waitForSession(app, id, (s) => s.status === "recording");
  await new Promise((r) => setTimeout(r, 1_000));
  void app.request("POST", `/stop/${id}`).catch(() => undefined);
  return id;
}

test("store down: the ended session frees its slot, says recording_pending, and is stored once the store is back", { timeout: 120_000 }, async (t) => {
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), "i15-s3-"));
  const app = await startBotApp(t, {
    bot: { MAX_CONCURRENT_SESSIONS: 1 },
    feature: { storage: { backend: "s3", bucket: "recordings", region: "us-east-1", endpoint: `http://127.0.0.1:${port}`, forcePathStyle: true }, uploadRetry: { minDelayMs: 100, maxDelayMs: 1_000 } },
  });
  const first = await recordAndStop(app, "First");
  const pending = await waitForSession(app, first, (s) => s.recording_pending === true, 30_000);
  assert.ok(!["stopped", "error"].includes(String(pending.status)), JSON.stringify(pending));
  const second = await app.request("POST", "/join", { body: { meeting_url: MEETING_URL, display_name: "Second" } });
  assert.equal(second.status, 200, `the slot was not given back: ${JSON.stringify(second.body)}`);
  const secondId = String(((second.body as Json).session as Json).session_id);
  const emulator = await startS3rver(port, join(dir, "s3rver"), ["recordings"]);
  t.after(() => emulator.stop());
  t.after(() => rm(dir, { recursive: true, force: true }));
  const done = await waitForSession(app, first, (s) => s.status === "stopped", 60_000);
  assert.match(String(done.recording_file), new RegExp(`recordings/${first}/`));
  assert.equal(done.recording_pending, false);
  await app.request("POST", `/stop/${secondId}`);
  await waitForSession(app, secondId, (s) => s.status === "stopped", 60_000);
});

test("a bucket that does not exist: error storage_failed, the local file kept and named", { timeout: 120_000 }, async (t) => {
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), "i15-s3-"));
  const emulator = await startS3rver(port, join(dir, "s3rver"), ["other"]);
  t.after(() => emulator.stop());
  const database = await freshDatabase("sqlite");
  t.after(() => database.drop());
  const app = await startBotApp(t, {
    databaseUrl: database.url,
    feature: { storage: { backend: "s3", bucket: "missing", region: "us-east-1", endpoint: `http://127.0.0.1:${port}`, forcePathStyle: true }, uploadRetry: { minDelayMs: 100, maxDelayMs: 1_000 } },
  });
  t.after(() => rm(dir, { recursive: true, force: true }));
  const id = await recordAndStop(app, "Nowhere");
  const s = await waitForSession(app, id, (x) => x.status === "error", 60_000);
  const kept = /kept at (\S+)\.$/.exec(String(s.error_message))?.[1];
  assert.ok(kept, String(s.error_message));
  await access(kept);
  const db = new Database(database.url.slice("file:".length), { readonly: true });
  const row = db.prepare("SELECT errorCode FROM BotSession WHERE id = ?").get(id) as { errorCode: string | null };
  db.close();
  assert.equal(row.errorCode, "storage_failed");
});
