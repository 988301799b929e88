// The worker's failure and shutdown paths: bad handshakes, a crashed browser or recorder, the
// supervisor going away, a stop while in the lobby. Nothing the worker started may survive.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test, type TestContext } from "node:test";
import { startTeamsFixture, type TeamsFixture } from "../fixture/teams/server.ts";
import { finishedAndClean, startWorker, type WorkerRun } from "./harness.ts";
import { survivorsMentioning } from "../helpers/audio/leftovers.ts";
import { holdMediaLock } from "../harness/media-lock.ts";
import { listProcesses } from "../../shared/process/group.ts";
import type { FromWorker } from "../../shared/ipc/messages.ts";
import { channel, readWav } from "../helpers/audio/wav.ts";

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

/** A worker recording the fixture's meeting, a second into the call. */
async function inCall(t: TestContext) {
  const meeting = fixture.createMeeting({ lobby: false });
  const run = await startWorker(t, { meetingUrl: meeting.joinUrl });
  const ready = await run.waitFor("ready");
  await run.waitFor("status", (m) => m.status === "recording");
  await new Promise((r) => setTimeout(r, 1_000));
  return { run, browserPid: ready.pids.chromium ?? 0 };
}

/** Chromium's processes of one kind (`--type=renderer`, the audio service). */
const chromiumChildren = async (browserPid: number, marker: string) => (await listProcesses()).filter((p) => p.pgid === browserPid && p.cmdline.includes(marker));

/** The session ended in `error` with this code and message, its recording kept, nothing left running. */
async function failedCleanly(run: WorkerRun, expected: { code: string; message: RegExp; faultAt?: number }): Promise<Extract<FromWorker, { type: "finished" }>> {
  const { finished, code, survivors } = await finishedAndClean(run);
  assert.equal(finished.status, "error");
  assert.equal(finished.errorCode, expected.code);
  assert.match(finished.errorMessage ?? "", expected.message);
  // Noticed at the fault, not after the page was found unknown (30 s) or never.
  if (expected.faultAt) assert.ok(Date.parse(finished.at) - expected.faultAt < 20_000, `finished ${finished.at}, fault ${new Date(expected.faultAt).toISOString()}`);
  assert.ok((finished.recordingBytes ?? 0) > 0);
  assert.equal(code, 0);
  assert.deepEqual(survivors, []);
  return finished;
}

/** Seconds of silence at the end of a WAV (the meeting's tone plays all along). */
async function silentTail(path: string): Promise<number> {
  const wav = await readWav(path);
  const left = channel(wav, 0);
  let last = left.length - 1;
  while (last > 0 && Math.abs(left[last] ?? 0) < 0.01) last--;
  return (left.length - 1 - last) / wav.sampleRate;
}

test("Chromium crashes in the call → error naming the browser; the recording is kept", TIMEOUT, async (t) => {
  const { run, browserPid } = await inCall(t);
  process.kill(-browserPid, "SIGKILL");
  await failedCleanly(run, { code: "browser_crashed", message: /browser \(Chromium\) crashed/ });
});

test("the page's renderer dies in the call → error naming the page at once, not a hang; the recording is kept", TIMEOUT, async (t) => {
  const { run, browserPid } = await inCall(t);
  const renderers = await chromiumChildren(browserPid, "--type=renderer");
  assert.ok(renderers.length > 0, "the page's renderer found");
  const faultAt = Date.now();
  for (const r of renderers) process.kill(r.pid, "SIGKILL");
  const finished = await failedCleanly(run, { code: "browser_crashed", message: /page crashed/, faultAt });
  // The file ends when the page died, not after the way out (it held ~5 s of silence then).
  const tail = await silentTail(String(finished.recordingPath));
  assert.ok(tail < 2.5, `${tail.toFixed(2)} s of silence after the crash`);
});

test("Chromium's audio service dies in the call → error audio_failed at once, not hours of silence", TIMEOUT, async (t) => {
  const { run, browserPid } = await inCall(t);
  let services = await chromiumChildren(browserPid, "audio.mojom.AudioService");
  for (let i = 0; i < 50 && services.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 200));
    services = await chromiumChildren(browserPid, "audio.mojom.AudioService");
  }
  assert.ok(services.length > 0, "the audio service found");
  // Past the priority poll that first finds it (every second).
  await new Promise((r) => setTimeout(r, 1_500));
  const faultAt = Date.now();
  for (const p of services) process.kill(p.pid, "SIGKILL");
  await failedCleanly(run, { code: "audio_failed", message: /audio service died/, faultAt });
});

test("Chromium freezes in the call (SIGSTOP) → error naming the browser once it stopped answering, nothing left behind", { timeout: 240_000 }, async (t) => {
  const { run, browserPid } = await inCall(t);
  process.kill(browserPid, "SIGSTOP");
  t.after(() => {
    try {
      process.kill(browserPid, "SIGCONT");
    } catch {
      // Killed by the worker's way out, as it should be.
    }
  });
  await failedCleanly(run, { code: "browser_crashed", message: /stopped responding/ });
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
