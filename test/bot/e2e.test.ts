/**
 * End to end with the real worker (Chromium, PulseAudio, ffmpeg) against the Teams fixture, on
 * SQLite: lobby → admit → recording → stop with the tone stored under its spec name; record
 * false; and a worker SIGKILLed mid-recording ending `interrupted` with its repaired file and
 * webhook. One browser at a time (2 shared cores).
 */
import assert from "node:assert/strict";
import { stat } from "node:fs/promises";
import { basename, dirname, resolve } from "node:path";
import { describe, test } from "node:test";
import { readJournal, summarizeJournal } from "../../shared/journal/index.ts";
import { survivorsMentioning } from "../helpers/audio/leftovers.ts";
import { startTeamsFixture } from "../fixture/teams/server.ts";
import { startBotApp, waitForSession } from "./fixtures/bot-app.ts";
import { hear, workerPid } from "./fixtures/media.ts";
import { startReceiver } from "./fixtures/receiver.ts";
import { sessionPaths } from "../../control/bot/paths.ts";
import { holdMediaLock } from "../harness/media-lock.ts";

// Real Chromium, PulseAudio and ffmpeg: one such file at a time (see media-lock.ts).
await holdMediaLock();

type Json = Record<string, unknown>;

describe("recorder bot end to end (real worker, sqlite)", { timeout: 600_000, concurrency: false }, () => {
  test("join → lobby → admit → recording → stop: the WAV holds the fixture tone", async (t) => {
    const fixture = await startTeamsFixture();
    t.after(() => fixture.close());
    const receiver = await startReceiver();
    t.after(() => receiver.close());
    const app = await startBotApp(t, { worker: "real", bot: { MEETING_ALLOWED_HOSTS: fixture.hostPort, WEBHOOK_URL: receiver.url, WEBHOOK_EVENTS: true } });
    const meeting = fixture.createMeeting({ lobby: true, tone: { frequency: 440 } });
    const join = await app.request("POST", "/join", { body: { meeting_url: meeting.joinUrl, reference: "e2e-1", display_name: "E2E Bot" } });
    assert.equal(join.status, 200, join.text);
    const id = String(((join.body as Json).session as Json).session_id);
    await waitForSession(app, id, (s) => s.status === "lobby", 120_000);
    await meeting.waitForPhase("lobby");
    meeting.admit();
    const rec = await waitForSession(app, id, (s) => s.status === "recording", 60_000);
    assert.ok(rec.joined_at);
    await new Promise((r) => setTimeout(r, 5000));
    const stop = await app.request("POST", `/stop/${id}`);
    const s = (stop.body as { session: Json }).session;
    const done = s.status === "stopped" ? s : await waitForSession(app, id, (x) => x.status === "stopped", 60_000);
    assert.equal(done.end_reason, "stopped_by_api");
    const file = String(done.recording_file);
    assert.equal(dirname(file), resolve(app.recordingsDir));
    assert.match(basename(file), new RegExp(`^${id}_\\d{8}_\\d{6}\\.wav$`));
    assert.equal((await stat(file)).size, done.recording_bytes);
    const heard = await hear(file);
    assert.ok(heard.durationSec > 3, `duration ${heard.durationSec}`);
    assert.ok(Math.abs(heard.frequency - 440) <= 10, `frequency ${heard.frequency}`);
    const finished = await receiver.waitFor((e) => e.event === "finished" && e.session_id === id);
    assert.equal(finished.status, "stopped");
    assert.equal(finished.reference, "e2e-1");
    assert.equal(finished.recording_file, file);
    const changes = receiver.events.filter((e) => e.event === "status_changed" && e.session_id === id).map((e) => e.status);
    assert.deepEqual(changes.slice(-3), ["lobby", "recording", "stopped"].slice(-3));
    assert.deepEqual(await survivorsMentioning(sessionPaths(app.recordingsDir, id, "wav").sessionDir), []);
  });

  test("record false: connected → stopped, nothing stored", async (t) => {
    const fixture = await startTeamsFixture();
    t.after(() => fixture.close());
    const app = await startBotApp(t, { worker: "real", bot: { MEETING_ALLOWED_HOSTS: fixture.hostPort } });
    const meeting = fixture.createMeeting({ lobby: false });
    const join = await app.request("POST", "/join", { body: { meeting_url: meeting.joinUrl, record: false } });
    const id = String(((join.body as Json).session as Json).session_id);
    await waitForSession(app, id, (s) => s.status === "connected", 120_000);
    await app.request("POST", `/stop/${id}`);
    const done = await waitForSession(app, id, (s) => s.status === "stopped", 60_000);
    assert.equal(done.recording_file, null);
    assert.equal(done.record, false);
  });

  test("SIGKILL of a worker mid-recording: interrupted at once, repaired file stored, webhook sent", async (t) => {
    const fixture = await startTeamsFixture();
    t.after(() => fixture.close());
    const receiver = await startReceiver();
    t.after(() => receiver.close());
    const app = await startBotApp(t, { worker: "real", bot: { MEETING_ALLOWED_HOSTS: fixture.hostPort, WEBHOOK_URL: receiver.url } });
    const meeting = fixture.createMeeting({ lobby: false, tone: { frequency: 660 } });
    const join = await app.request("POST", "/join", { body: { meeting_url: meeting.joinUrl, reference: "kill-me" } });
    const id = String(((join.body as Json).session as Json).session_id);
    await waitForSession(app, id, (s) => s.status === "recording", 120_000);
    await new Promise((r) => setTimeout(r, 4000));
    const pid = await workerPid(id);
    assert.ok(pid, "worker found");
    const paths = sessionPaths(app.recordingsDir, id, "wav");
    const startedAt = summarizeJournal((await readJournal(paths.journal)).records);
    const killedAt = Date.now();
    process.kill(pid, "SIGKILL");
    const done = await waitForSession(app, id, (s) => s.status === "interrupted", 20_000);
    assert.equal(done.end_reason, "interrupted");
    const file = String(done.recording_file);
    assert.match(basename(file), new RegExp(`^${id}_\\d{8}_\\d{6}\\.wav$`));
    const heard = await hear(file);
    assert.ok(Math.abs(heard.frequency - 660) <= 10, `frequency ${heard.frequency}`);
    const records = (await readJournal(paths.journal)).records;
    const started = records.find((r) => r.type === "recording_started");
    const admitted = records.find((r) => r.type === "admitted");
    assert.ok(started && admitted && startedAt.recordingStarted);
    // Issue #15: the repaired file is cut at the admission like a stopped one (0.5 s before it).
    const expected = (killedAt - Date.parse(admitted.at)) / 1000 + 0.5;
    const untrimmed = (killedAt - Date.parse(started.at)) / 1000;
    // Nothing heard before the kill is lost (within 0.5 s), and the join before the admission is gone.
    assert.ok(heard.durationSec >= expected - 0.5, `recorded ${heard.durationSec}s, ${expected}s ran from the admission until the kill`);
    assert.ok(heard.durationSec <= expected + 1, `recorded ${heard.durationSec}s: not cut at the admission (${expected}s; ${untrimmed}s untrimmed)`);
    const hook = await receiver.waitFor((e) => e.event === "finished" && e.session_id === id);
    assert.equal(hook.status, "interrupted");
    assert.equal(hook.reference, "kill-me");
    assert.equal(hook.recording_file, file);
    assert.deepEqual(await survivorsMentioning(paths.sessionDir), []);
  });
});
