/**
 * Issue #15 "Disk safety", the gate: `/join` answers 507 {detail} when RECORDINGS_DIR cannot hold
 * the new session's worst case beside what running sessions may still write and MIN_FREE_DISK_MB;
 * `/readyz` says low disk. RECORDINGS_DIR is a 200 MB tmpfs mounted by the test.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { MEETING_URL, startBotApp, waitForSession } from "../bot/fixtures/bot-app.ts";
import { mountTmpfs } from "./tmpfs.ts";

type Json = Record<string, unknown>;

test("a disk too small for MAX_RECORDING_MINUTES of WAV: /join 507 and /readyz low disk", { timeout: 60_000 }, async (t) => {
  const dir = mountTmpfs(t, 200);
  if (!dir) return;
  // Defaults: 240 + 30 minutes of WAV is 3.1 GB, more than the whole disk.
  const app = await startBotApp(t, { recordingsDir: dir });
  const join = await app.request("POST", "/join", { body: { meeting_url: MEETING_URL, display_name: "Bot" } });
  assert.equal(join.status, 507, JSON.stringify(join.body));
  assert.match(String((join.body as Json).detail), /free disk space in RECORDINGS_DIR/);
  const ready = await app.request("GET", "/readyz");
  assert.equal(ready.status, 503);
  assert.match(String(((ready.body as Json).problems as Json).disk), /low disk/);
  assert.deepEqual((await app.request("GET", "/sessions")).body, { sessions: [], next_cursor: null });
});

test("running sessions' needs count: the first fits, the second gets 507, record false fits", { timeout: 60_000 }, async (t) => {
  const dir = mountTmpfs(t, 200);
  if (!dir) return;
  // One WAV session: (3 + 1) min × 11.52 MB + 64 MB worker folder ≈ 110 MB; two do not fit in 200 MB.
  const app = await startBotApp(t, { recordingsDir: dir, bot: { MAX_RECORDING_MINUTES: 3, MEETING_WAIT_FOR_LOBBY: 1, MIN_FREE_DISK_MB: 1 } });
  assert.equal((await app.request("GET", "/readyz")).status, 200);
  const first = await app.request("POST", "/join", { body: { meeting_url: MEETING_URL, display_name: "One" } });
  assert.equal(first.status, 200, JSON.stringify(first.body));
  const id = String(((first.body as Json).session as Json).session_id);
  await waitForSession(app, id, (s) => s.status === "recording");
  const second = await app.request("POST", "/join", { body: { meeting_url: MEETING_URL, display_name: "Two" } });
  assert.equal(second.status, 507, JSON.stringify(second.body));
  assert.match(String((second.body as Json).detail), /1 running session/);
  const silent = await app.request("POST", "/join", { body: { meeting_url: MEETING_URL, display_name: "Three", record: false } });
  assert.equal(silent.status, 200, JSON.stringify(silent.body));
  await app.request("POST", `/stop/${id}`);
});
