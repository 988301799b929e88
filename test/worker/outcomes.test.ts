// How a session ends, one worker process per case against the Teams fixture: each case forks
// worker/main.ts over IPC exactly as the supervisor does, and checks the messages, the journal
// and that no Chromium, ffmpeg or PulseAudio survives.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { after, before, test } from "node:test";
import { startTeamsFixture, type TeamsFixture } from "../fixture/teams/server.ts";
import { finishedAndClean, startWorker } from "./harness.ts";
import { holdMediaLock } from "../harness/media-lock.ts";
import { readWav } from "../helpers/audio/wav.ts";

// Real Chromium, PulseAudio and ffmpeg: one such file at a time (see media-lock.ts).
await holdMediaLock();

let fixture: TeamsFixture;
before(async () => (fixture = await startTeamsFixture()));
after(() => fixture.close());

const TIMEOUT = { timeout: 150_000 };

test("record false: connected, ping, request refused, stop message → stopped/stopped_by_api, no file", TIMEOUT, async (t) => {
  const meeting = fixture.createMeeting({ lobby: false });
  const run = await startWorker(t, { meetingUrl: meeting.joinUrl, record: false });
  const ready = await run.waitFor("ready");
  assert.equal(ready.pids.ffmpeg, undefined, "no recorder when record is false");
  assert.ok(ready.pids.chromium && ready.pids.pulseaudio);
  const connected = await run.waitFor("status", (m) => m.status === "connected");
  assert.ok(connected.joinedAt);

  run.send({ type: "ping", id: 7 });
  await run.waitFor("pong", (m) => m.id === 7, 5_000);
  run.send({ type: "request", id: 3, op: "play", args: { path: "a.wav" } });
  const response = await run.waitFor("response", (m) => m.id === 3, 5_000);
  assert.deepEqual(response.error, { status: 409, message: "microphone playback is not enabled" });
  assert.equal(response.ok, false);

  run.send({ type: "stop", reason: "stopped_by_api" });
  const { finished, code, survivors } = await finishedAndClean(run);
  assert.equal(finished.status, "stopped");
  assert.equal(finished.endReason, "stopped_by_api");
  assert.equal(finished.recordingPath, null);
  assert.equal(finished.recordingBytes, null);
  assert.equal(code, 0);
  assert.deepEqual(survivors, []);
  assert.equal(existsSync(run.init.recordingPath), false);
  assert.equal(existsSync(run.init.workDir), false, "workDir removed");
  assert.deepEqual(run.statuses(), ["joining", "connected", "stopped"]);
  assert.equal(meeting.state().phase, "left", "the bot clicked leave");
  const journal = await run.journal();
  assert.deepEqual(journal.map((r) => r.type), ["session", "status", "status", "status"]);
});

test("denied in the lobby → denied/denied, recording discarded", TIMEOUT, async (t) => {
  const meeting = fixture.createMeeting({ lobby: true });
  const run = await startWorker(t, { meetingUrl: meeting.joinUrl });
  await run.waitFor("status", (m) => m.status === "lobby");
  await meeting.waitForPhase("lobby");
  meeting.deny();
  const { finished, code, survivors } = await finishedAndClean(run);
  assert.equal(finished.status, "denied");
  assert.equal(finished.endReason, "denied");
  assert.equal(finished.recordingPath, null);
  assert.equal(code, 0);
  assert.deepEqual(survivors, []);
  assert.deepEqual(run.statuses(), ["joining", "lobby", "denied"]);
  assert.equal(existsSync(run.init.recordingPath), false);
});

test("nobody admits within lobbyWaitMs → not_admitted/lobby_timeout", TIMEOUT, async (t) => {
  const meeting = fixture.createMeeting({ lobby: true });
  const run = await startWorker(t, { meetingUrl: meeting.joinUrl, lobbyWaitMs: 3_000 });
  const { finished, survivors } = await finishedAndClean(run);
  assert.equal(finished.status, "not_admitted");
  assert.equal(finished.endReason, "lobby_timeout");
  assert.deepEqual(survivors, []);
  assert.deepEqual(run.statuses(), ["joining", "lobby", "not_admitted"]);
  assert.equal(meeting.state().phase, "left", "the bot left the lobby");
});

test("removed from the call → stopped/removed with the recording kept", TIMEOUT, async (t) => {
  const meeting = fixture.createMeeting({ lobby: false });
  const run = await startWorker(t, { meetingUrl: meeting.joinUrl });
  await run.waitFor("status", (m) => m.status === "recording");
  await new Promise((r) => setTimeout(r, 2_000));
  meeting.remove();
  const { finished, survivors } = await finishedAndClean(run);
  assert.equal(finished.status, "stopped");
  assert.equal(finished.endReason, "removed");
  assert.equal(finished.recordingPath, run.init.recordingPath);
  assert.ok((finished.recordingBytes ?? 0) > 100_000, `bytes ${finished.recordingBytes}`);
  assert.deepEqual(survivors, []);
});

test("removed with only the WebSocket telling (the call still on screen): the file ends at the removal, not after the leave's clicks", TIMEOUT, async (t) => {
  const meeting = fixture.createMeeting({ lobby: false });
  const run = await startWorker(t, { meetingUrl: meeting.joinUrl });
  await run.waitFor("status", (m) => m.status === "recording");
  const inCallAt = Date.now();
  await new Promise((r) => setTimeout(r, 2_000));
  meeting.remove({ screen: false });
  const removedAt = Date.now();
  const { finished, survivors } = await finishedAndClean(run);
  assert.equal(finished.endReason, "removed");
  const wav = await readWav(String(finished.recordingPath));
  // Admission to removal, with the detection's second or so; the leave's timeout (10 s) would show.
  const inCall = (removedAt - inCallAt) / 1000;
  assert.ok(wav.durationSec < inCall + 2.5, `file ${wav.durationSec} s for ${inCall} s in the call`);
  assert.deepEqual(survivors, []);
});

test("meeting ended → stopped/meeting_ended", TIMEOUT, async (t) => {
  const meeting = fixture.createMeeting({ lobby: false });
  const run = await startWorker(t, { meetingUrl: meeting.joinUrl });
  await run.waitFor("status", (m) => m.status === "recording");
  meeting.end();
  const { finished, survivors } = await finishedAndClean(run);
  assert.equal(finished.status, "stopped");
  assert.equal(finished.endReason, "meeting_ended");
  assert.deepEqual(survivors, []);
});

test("maxRecordingMs reached → stopped/max_duration", TIMEOUT, async (t) => {
  const meeting = fixture.createMeeting({ lobby: false });
  const run = await startWorker(t, { meetingUrl: meeting.joinUrl, maxRecordingMs: 4_000 });
  const recording = await run.waitFor("status", (m) => m.status === "recording");
  const { finished, survivors } = await finishedAndClean(run);
  assert.equal(finished.status, "stopped");
  assert.equal(finished.endReason, "max_duration");
  assert.ok(Date.parse(finished.at) - Date.parse(recording.at) >= 4_000);
  assert.deepEqual(survivors, []);
});

test("sign-in wall → error with a message a person can act on", TIMEOUT, async (t) => {
  const meeting = fixture.createMeeting({ variant: "signin" });
  const run = await startWorker(t, { meetingUrl: meeting.joinUrl });
  const { finished, code, survivors } = await finishedAndClean(run);
  assert.equal(finished.status, "error");
  assert.equal(finished.endReason, "error");
  assert.match(finished.errorMessage ?? "", /signed-in account|anonymous join/);
  assert.equal(code, 0);
  assert.deepEqual(survivors, []);
  const last = (await run.journal()).at(-1);
  assert.equal(last?.type === "status" && last.error_message, finished.errorMessage);
});
