// The worker's failure and shutdown paths: bad handshakes, a crashed browser or recorder, the
// supervisor going away, a stop while in the lobby. Nothing the worker started may survive.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { startTeamsFixture, type TeamsFixture } from "../fixture/teams/server.ts";
import { finishedAndClean, startWorker } from "./harness.ts";
import { survivorsMentioning } from "../helpers/audio/leftovers.ts";
import { holdMediaLock } from "../harness/media-lock.ts";
import { listProcesses } from "../../shared/process/group.ts";

// Real Chromium, PulseAudio and ffmpeg: one such file at a time (see media-lock.ts).
await holdMediaLock();

let fixture: TeamsFixture;
before(async () => (fixture = await startTeamsFixture()));
after(() => fixture.close());

const TIMEOUT = { timeout: 150_000 };

test("handshake: ping answered before init; a first message other than init → initFailed, exit 1", TIMEOUT, async (t) => {
  const run = await startWorker(t, { meetingUrl: "http://127.0.0.1:1/l/meetup-join/x" }, false);
  run.send({ type: "ping", id: 1 });
  await run.waitFor("pong", (m) => m.id === 1, 20_000);
  run.send({ type: "stop", reason: "stopped_by_api" });
  const failed = await run.waitFor("initFailed", undefined, 20_000);
  assert.match(failed.message, /expected init/);
  assert.equal((await run.exited).code, 1);
});

test("an invalid init → initFailed naming the field", TIMEOUT, async (t) => {
  const run = await startWorker(t, { meetingUrl: "http://127.0.0.1:1/l/meetup-join/x" }, false);
  run.child.send({ ...run.init, sessionId: "not-a-uuid" });
  const failed = await run.waitFor("initFailed", undefined, 20_000);
  assert.match(failed.message, /sessionId/);
  assert.equal((await run.exited).code, 1);
});

test("a work dir that cannot be created → initFailed, nothing started", TIMEOUT, async (t) => {
  const run = await startWorker(t, { meetingUrl: "http://127.0.0.1:1/l/meetup-join/x", workDir: "/dev/null/work" });
  const failed = await run.waitFor("initFailed", undefined, 30_000);
  assert.match(failed.message, /Cannot prepare/);
  assert.equal((await run.exited).code, 1);
  assert.equal(run.messages.some((m) => m.type === "ready"), false);
});

test("stop while in the lobby → stopped/stopped_by_api, no recording", TIMEOUT, async (t) => {
  const meeting = fixture.createMeeting({ lobby: true });
  const run = await startWorker(t, { meetingUrl: meeting.joinUrl });
  await run.waitFor("status", (m) => m.status === "lobby");
  run.send({ type: "stop", reason: "shutdown" });
  const { finished, survivors } = await finishedAndClean(run);
  assert.equal(finished.status, "stopped");
  assert.equal(finished.endReason, "stopped_by_api");
  assert.equal(finished.recordingPath, null);
  assert.deepEqual(survivors, []);
  assert.equal(meeting.state().phase, "left");
});

test("Chromium crashes in the call → error naming the browser; the recording is kept", TIMEOUT, async (t) => {
  const meeting = fixture.createMeeting({ lobby: false });
  const run = await startWorker(t, { meetingUrl: meeting.joinUrl });
  const ready = await run.waitFor("ready");
  await run.waitFor("status", (m) => m.status === "recording");
  await new Promise((r) => setTimeout(r, 1_000));
  process.kill(-(ready.pids.chromium ?? 0), "SIGKILL");
  const { finished, code, survivors } = await finishedAndClean(run);
  assert.equal(finished.status, "error");
  assert.match(finished.errorMessage ?? "", /browser \(Chromium\) crashed/);
  assert.ok((finished.recordingBytes ?? 0) > 0);
  assert.equal(code, 0);
  assert.deepEqual(survivors, []);
});

test("the page's renderer dies in the call → error naming the page at once, not a hang; the recording is kept", TIMEOUT, async (t) => {
  const meeting = fixture.createMeeting({ lobby: false });
  const run = await startWorker(t, { meetingUrl: meeting.joinUrl });
  const ready = await run.waitFor("ready");
  await run.waitFor("status", (m) => m.status === "recording");
  await new Promise((r) => setTimeout(r, 1_000));
  const renderers = (await listProcesses()).filter((p) => p.pgid === ready.pids.chromium && p.cmdline.includes("--type=renderer"));
  assert.ok(renderers.length > 0, "the page's renderer found");
  const killedAt = Date.now();
  for (const r of renderers) process.kill(r.pid, "SIGKILL");
  const { finished, code, survivors } = await finishedAndClean(run);
  assert.equal(finished.status, "error");
  assert.equal(finished.errorCode, "browser_crashed");
  assert.match(finished.errorMessage ?? "", /page crashed/);
  // Noticed at its exit, not after the page was found unknown (30 s) or never.
  assert.ok(Date.parse(finished.at) - killedAt < 20_000, `finished ${finished.at}, killed ${new Date(killedAt).toISOString()}`);
  assert.ok((finished.recordingBytes ?? 0) > 0);
  assert.equal(code, 0);
  assert.deepEqual(survivors, []);
});

test("Chromium's audio service dies in the call → error audio_failed at once, not hours of silence", TIMEOUT, async (t) => {
  const meeting = fixture.createMeeting({ lobby: false });
  const run = await startWorker(t, { meetingUrl: meeting.joinUrl });
  const ready = await run.waitFor("ready");
  await run.waitFor("status", (m) => m.status === "recording");
  const service = async () => (await listProcesses()).filter((p) => p.pgid === ready.pids.chromium && p.cmdline.includes("audio.mojom.AudioService"));
  for (let i = 0; i < 50 && (await service()).length === 0; i++) await new Promise((r) => setTimeout(r, 200));
  await new Promise((r) => setTimeout(r, 1_500));
  const services = await service();
  assert.ok(services.length > 0, "the audio service found");
  const killedAt = Date.now();
  for (const p of services) process.kill(p.pid, "SIGKILL");
  const { finished, code, survivors } = await finishedAndClean(run);
  assert.equal(finished.status, "error");
  assert.equal(finished.errorCode, "audio_failed");
  assert.match(finished.errorMessage ?? "", /audio service died/);
  assert.ok(Date.parse(finished.at) - killedAt < 20_000, `finished ${finished.at}, killed ${new Date(killedAt).toISOString()}`);
  assert.ok((finished.recordingBytes ?? 0) > 0);
  assert.equal(code, 0);
  assert.deepEqual(survivors, []);
});

test("Chromium freezes in the call (SIGSTOP) → error naming the browser once it stopped answering, nothing left behind", { timeout: 240_000 }, async (t) => {
  const meeting = fixture.createMeeting({ lobby: false });
  const run = await startWorker(t, { meetingUrl: meeting.joinUrl });
  const ready = await run.waitFor("ready");
  await run.waitFor("status", (m) => m.status === "recording");
  await new Promise((r) => setTimeout(r, 1_000));
  const browserPid = ready.pids.chromium ?? 0;
  process.kill(browserPid, "SIGSTOP");
  t.after(() => void (() => { try { process.kill(browserPid, "SIGCONT"); } catch { /* gone */ } })());
  const { finished, code, survivors } = await finishedAndClean(run);
  assert.equal(finished.status, "error");
  assert.equal(finished.errorCode, "browser_crashed");
  assert.match(finished.errorMessage ?? "", /stopped responding/);
  assert.ok((finished.recordingBytes ?? 0) > 0);
  assert.equal(code, 0);
  assert.deepEqual(survivors, []);
});

test("ffmpeg dies in the call → error naming the recorder", TIMEOUT, async (t) => {
  const meeting = fixture.createMeeting({ lobby: false });
  const run = await startWorker(t, { meetingUrl: meeting.joinUrl });
  const ready = await run.waitFor("ready");
  await run.waitFor("status", (m) => m.status === "recording");
  process.kill(ready.pids.ffmpeg ?? 0, "SIGKILL");
  const { finished, survivors } = await finishedAndClean(run);
  assert.equal(finished.status, "error");
  assert.match(finished.errorMessage ?? "", /recorder \(ffmpeg\) stopped unexpectedly/);
  assert.deepEqual(survivors, []);
  assert.equal(meeting.state().phase, "left");
});

test("the supervisor goes away (IPC closed) → the worker leaves, cleans up and exits; journal says interrupted", TIMEOUT, async (t) => {
  const meeting = fixture.createMeeting({ lobby: false });
  const run = await startWorker(t, { meetingUrl: meeting.joinUrl });
  await run.waitFor("status", (m) => m.status === "recording");
  run.child.disconnect();
  const { code } = await run.exited;
  assert.equal(code, 0);
  assert.deepEqual(await survivorsMentioning(run.init.workDir, 5_000), []);
  assert.equal(existsSync(run.init.workDir), false);
  assert.equal(meeting.state().phase, "left");
  const journal = await run.journal();
  const closed = journal.find((r) => r.type === "recording_closed");
  assert.ok(closed?.type === "recording_closed" && closed.bytes > 0);
  const last = journal.at(-1);
  assert.equal(last?.type === "status" && last.status, "interrupted");
});

test("init.chromiumPath (CHROMIUM_PATH) is the browser launched: a missing binary → initFailed naming Chromium, nothing survives", TIMEOUT, async (t) => {
  const meeting = fixture.createMeeting({ lobby: false });
  const run = await startWorker(t, { meetingUrl: meeting.joinUrl, chromiumPath: "/nonexistent/chromium-for-test" });
  const failed = await run.waitFor("initFailed", undefined, 60_000);
  assert.match(failed.message, /Chromium failed to launch/);
  assert.equal((await run.exited).code, 1);
  assert.equal(run.messages.some((m) => m.type === "ready"), false);
  assert.deepEqual(await survivorsMentioning(run.init.workDir, 5_000), [], "PulseAudio and ffmpeg were stopped");
});

test("init.chromiumPath: a wrapper named there is the one that runs the meeting", TIMEOUT, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "chromium-wrapper-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const wrapper = join(dir, "chromium");
  writeFileSync(wrapper, `#!/bin/sh\necho "$$" >> ${join(dir, "used")}\nexec /usr/bin/chromium "$@"\n`, { mode: 0o755 });
  const meeting = fixture.createMeeting({ lobby: false });
  const run = await startWorker(t, { meetingUrl: meeting.joinUrl, chromiumPath: wrapper, record: false });
  await run.waitFor("status", (m) => m.status === "connected", 90_000);
  assert.ok(existsSync(join(dir, "used")), "the wrapper started the browser");
  run.send({ type: "stop", reason: "stopped_by_api" });
  const { finished, survivors } = await finishedAndClean(run);
  assert.equal(finished.status, "stopped");
  assert.deepEqual(survivors, []);
});
