/**
 * Issue #16: each automatic_leave rule ends a real session (worker, Chromium, PulseAudio, ffmpeg
 * against the Teams fixture) with its end_reason, and an override is really used (each case is
 * built so the service default would end it otherwise or not at all). Times are checked loosely.
 */
import assert from "node:assert/strict";
import { describe, test, type TestContext } from "node:test";
import { startTeamsFixture, type MeetingOptions, type TeamsFixture } from "../fixture/teams/server.ts";
import { holdMediaLock } from "../harness/media-lock.ts";
import { startBotApp, waitForSession, type BotApp } from "./fixtures/bot-app.ts";
import { checkEvidence } from "./fixtures/evidence.ts";

await holdMediaLock();

type Json = Record<string, unknown>;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function env(t: TestContext): Promise<{ fixture: TeamsFixture; app: BotApp }> {
  const fixture = await startTeamsFixture();
  t.after(() => fixture.close());
  const app = await startBotApp(t, { worker: "real", bot: { MEETING_ALLOWED_HOSTS: fixture.hostPort } });
  return { fixture, app };
}

async function start(e: { fixture: TeamsFixture; app: BotApp }, options: Partial<MeetingOptions>, automatic_leave: Json) {
  const meeting = e.fixture.createMeeting({ lobby: false, ...options });
  const res = await e.app.request("POST", "/join", { body: { meeting_url: meeting.joinUrl, automatic_leave } });
  assert.equal(res.status, 200, res.text);
  const id = String(((res.body as Json).session as Json).session_id);
  return { meeting, id };
}

const seconds = (a: unknown, b: unknown) => (Date.parse(String(b)) - Date.parse(String(a))) / 1000;

describe("automatic_leave rules end real sessions", { timeout: 900_000, concurrency: false }, () => {
  test("lobby_wait_minutes: not_admitted / lobby_timeout after the session's own wait (service default 30 min)", async (t) => {
    const e = await env(t);
    const { id, meeting } = await start(e, { lobby: true }, { lobby_wait_minutes: 0.1 });
    const lobby = await waitForSession(e.app, id, (s) => s.status === "lobby", 120_000);
    const done = await waitForSession(e.app, id, (s) => s.status === "not_admitted", 90_000);
    assert.equal(done.end_reason, "lobby_timeout");
    const waited = seconds(lobby.created_at, done.ended_at);
    assert.ok(waited >= 6 && waited < 120, `waited ${waited} s`);
    // not_admitted keeps what the page showed: the lobby, in a screenshot, its HTML and console.
    const evidence = await checkEvidence(e.app, "", id, { secrets: [meeting.passcode], expectPage: true, viewport: { width: 1280, height: 720 } });
    assert.ok(evidence.steps.some((s) => s.stage === "lobby"));
  });

  test("alone_seconds: 20 one-second checks, not the default five", async (t) => {
    const e = await env(t);
    const { meeting, id } = await start(e, { participants: 3 }, { alone_seconds: 20 });
    await waitForSession(e.app, id, (s) => s.status === "recording", 120_000);
    meeting.setParticipants(1);
    const droppedAt = Date.now();
    await sleep(10_000);
    assert.equal((await e.app.request("GET", `/status/${id}`)).body && ((await e.app.request("GET", `/status/${id}`)).body as Json).status, "recording", "five checks would have ended it by now");
    const done = await waitForSession(e.app, id, (s) => s.status === "stopped", 90_000);
    assert.equal(done.end_reason, "alone");
    const after = (Date.parse(String(done.ended_at)) - droppedAt) / 1000;
    assert.ok(after >= 19, `left ${after} s after the drop`);
  });

  test("silence_minutes: a silent meeting ends `silence` once active; a meeting with sound does not", async (t) => {
    const e = await env(t);
    const rules = { silence_minutes: 0.1, silence_activate_after_minutes: 0.05 };
    const quiet = await start(e, { tone: null }, rules);
    const loud = await start(e, { tone: { frequency: 440 } }, rules);
    const recording = await waitForSession(e.app, quiet.id, (s) => s.status === "recording", 120_000);
    const done = await waitForSession(e.app, quiet.id, (s) => s.status === "stopped", 120_000);
    assert.equal(done.end_reason, "silence");
    const inCall = seconds(recording.joined_at, done.ended_at);
    assert.ok(inCall >= 8, `left after ${inCall} s in the call (3 s before counting + 6 s silent)`);
    await waitForSession(e.app, loud.id, (s) => s.status === "recording", 120_000);
    await sleep(12_000);
    assert.equal(((await e.app.request("GET", `/status/${loud.id}`)).body as Json).status, "recording", "sound is not silence");
    await e.app.request("POST", `/stop/${loud.id}`);
    const stopped = await waitForSession(e.app, loud.id, (s) => s.status === "stopped", 60_000);
    assert.equal(stopped.end_reason, "stopped_by_api");
  });

  test("max_duration_minutes: ends max_duration (service default 240 min)", async (t) => {
    const e = await env(t);
    const { id } = await start(e, {}, { max_duration_minutes: 0.1 });
    const done = await waitForSession(e.app, id, (s) => s.status === "stopped", 120_000);
    assert.equal(done.end_reason, "max_duration");
    const inCall = seconds(done.joined_at, done.ended_at);
    assert.ok(inCall >= 5.5 && inCall < 60, `${inCall} s in the call`);
  });

  test("bot_names: a person keeps the bot in; only bots left ends only_bots", async (t) => {
    const e = await env(t);
    const { meeting, id } = await start(e, { participants: 3 }, { bot_names: ["notetaker", "fireflies"], alone_seconds: 2 });
    meeting.setParticipants(3, ["Alice Example", "Fireflies.ai Bot"]);
    await waitForSession(e.app, id, (s) => s.status === "recording", 120_000);
    await sleep(8_000);
    assert.equal(((await e.app.request("GET", `/status/${id}`)).body as Json).status, "recording", "Alice is no bot");
    meeting.setParticipants(3, ["Otter Notetaker", "Fireflies.ai Bot"]);
    const done = await waitForSession(e.app, id, (s) => s.status === "stopped", 60_000);
    assert.equal(done.end_reason, "only_bots");
  });
});
