/**
 * The whole product (HTTP API, real worker: Chromium, PulseAudio, ffmpeg) against a second Teams
 * imitation written from teams-dom.md alone (test/fixture/teams-alt), as an outside suite would
 * build it: other launcher, dialogs before and after "Join now", native-checkbox switches, lobby
 * texts only, no participant badge, removal by text and the end by URL. The bot must still get
 * in, record the meeting's sound, and see alone, removed and ended.
 */
import assert from "node:assert/strict";
import { describe, test, type TestContext } from "node:test";
import { startAltTeamsFixture, type AltOptions } from "../fixture/teams-alt/server.ts";
import { holdMediaLock } from "../harness/media-lock.ts";
import { startBotApp, waitForSession } from "./fixtures/bot-app.ts";
import { hear } from "./fixtures/media.ts";
import { channel, longestQuietMs, openListener, toneHz, waitFor } from "../listen/helpers.ts";

// Real Chromium, PulseAudio and ffmpeg: one such file at a time (see media-lock.ts).
await holdMediaLock();

type Json = Record<string, unknown>;

async function botIn(t: TestContext, options: Partial<AltOptions>) {
  const fixture = await startAltTeamsFixture();
  t.after(() => fixture.close());
  const app = await startBotApp(t, { worker: "real", bot: { MEETING_ALLOWED_HOSTS: `teams.microsoft.com,teams.live.com,${fixture.hostPort}` } });
  const meeting = fixture.createMeeting(options);
  const join = await app.request("POST", "/join", { body: { meeting_url: meeting.joinUrl, display_name: "Alt Bot" } });
  assert.equal(join.status, 200, join.text);
  const id = String(((join.body as Json).session as Json).session_id);
  return { app, meeting, id };
}

describe("another Teams imitation (real worker, sqlite)", { timeout: 600_000, concurrency: false }, () => {
  test("dialogs before and after Join now, lobby by text, roster count: recorded, then alone", async (t) => {
    const { app, meeting, id } = await botIn(t, { lobby: true, roster: true, participants: 3, frequency: 523 });
    await waitForSession(app, id, (s) => s.status === "lobby", 120_000);
    const inLobby = await meeting.waitForPhase("lobby");
    assert.equal(inLobby.displayName, "Alt Bot");
    assert.equal(inLobby.cameraOn, false, "camera off (native checkbox)");
    assert.equal(inLobby.micOn, false, "mic off (checked attribute)");
    assert.ok(inLobby.joinPresses >= 2, "Join now pressed again after the dialog came back");
    meeting.admit();
    await waitForSession(app, id, (s) => s.status === "recording" && s.participant_count === 3, 60_000);
    await new Promise((r) => setTimeout(r, 4000));
    meeting.setParticipants(1);
    const done = await waitForSession(app, id, (s) => s.status === "stopped", 60_000);
    assert.equal(done.end_reason, "alone");
    const heard = await hear(String(done.recording_file));
    assert.ok(heard.durationSec > 3, `duration ${heard.durationSec}`);
    assert.ok(Math.abs(heard.frequency - 523) <= 10, `frequency ${heard.frequency}`);
  });

  test("no roster at all: alone known only from the text; a live listener hears the meeting meanwhile", async (t) => {
    const { app, meeting, id } = await botIn(t, { lobby: false, roster: false, participants: 2 });
    await waitForSession(app, id, (s) => s.status === "recording", 120_000);
    // Issue #18 against this imitation's own way of playing the call (its <audio>, its WebRTC hop).
    const listener = await openListener(app, id, { sample_rate: 16000 }, t);
    await waitFor("4 s of live audio", () => listener.frames.length >= 200, 30_000);
    const last = channel(Buffer.concat(listener.frames.slice(-100)), 1);
    assert.ok(Math.abs(toneHz(last, 16000) - 523) <= 5, `heard ${toneHz(last, 16000)} Hz live`);
    assert.ok(longestQuietMs(last, 16000) < 100, `a ${longestQuietMs(last, 16000)} ms gap in the last 2 s`);
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal(((await app.request("GET", `/status/${id}`)).body as Json).status, "recording", "an unknown count is not alone");
    meeting.setParticipants(1);
    const done = await waitForSession(app, id, (s) => s.status === "stopped", 60_000);
    assert.equal(done.end_reason, "alone");
  });

  test("removed, told by text alone", async (t) => {
    const { app, meeting, id } = await botIn(t, { lobby: false });
    await waitForSession(app, id, (s) => s.status === "recording", 120_000);
    await new Promise((r) => setTimeout(r, 2000));
    meeting.remove();
    const done = await waitForSession(app, id, (s) => s.status === "stopped", 60_000);
    assert.equal(done.end_reason, "removed");
    assert.ok(done.recording_file, "the recording is kept when the bot is removed");
  });

  test("the meeting ends, told by the URL alone", async (t) => {
    const { app, meeting, id } = await botIn(t, { lobby: false });
    await waitForSession(app, id, (s) => s.status === "recording", 120_000);
    await new Promise((r) => setTimeout(r, 2000));
    meeting.end();
    const done = await waitForSession(app, id, (s) => s.status === "stopped", 60_000);
    assert.equal(done.end_reason, "meeting_ended");
  });
});
