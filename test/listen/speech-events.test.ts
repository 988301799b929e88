/**
 * Issue #18's "Done means", its events part, end to end: a real bot (Chromium, PulseAudio, ffmpeg)
 * in the Teams fixture meeting of the timeline issue (#17: participants who speak in turns, one
 * who joins late, one who leaves), a listener opened through the public API, and over the real
 * WebSocket: the status, then each join, leave and speech turn, for the right participant (id and
 * name), in the order the fixture played them, between the audio frames, with `offset_seconds`
 * rising and equal to the session's timeline (the live route, and the stored file once its
 * origin is final); the final status, then 1000.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { after, describe, test } from "node:test";
import { CLOSE, CLOSE_REASON, frameBytes } from "../../shared/listen/protocol.ts";
import { startBotApp, waitForSession } from "../bot/fixtures/bot-app.ts";
import { startTeamsFixture } from "../fixture/teams/server.ts";
import { holdMediaLock } from "../harness/media-lock.ts";
import { Cleanups } from "../mic/helpers.ts";
import { assertTimeline, BOT_NAME, delayScript, fixtureLog, SCRIPT, SCRIPT_SECONDS, type FixtureLog } from "../observe/scenario.ts";
import { openListener, sleep, type Json } from "./helpers.ts";

// Real Chromium, PulseAudio and ffmpeg: one such file at a time (see media-lock.ts).
await holdMediaLock();

/**
 * The timeline scenario, every turn, join and leave this much later: the listener can only open
 * once the bot is in the call, and must be there before the first of them.
 */
const DELAY_SECONDS = 8;
const script = delayScript(SCRIPT, DELAY_SECONDS);
const TIMELINE_EVENTS = new Set(["speech_started", "speech_stopped", "participant_joined", "participant_left"]);

interface Moment {
  type: string;
  name: string;
  /** Epoch ms (fixture clock). */
  at: number;
}

/** What the fixture played, in order: each turn's edges, each join and leave after the admission. */
function played(log: FixtureLog["log"]): Moment[] {
  const moments: Moment[] = [];
  for (const p of log.presence) {
    if (p.joinedAt !== null) moments.push({ type: "participant_joined", name: p.name, at: p.joinedAt });
    if (p.leftAt !== null) moments.push({ type: "participant_left", name: p.name, at: p.leftAt });
  }
  for (const s of log.speech) {
    moments.push({ type: "speech_started", name: s.name, at: s.start });
    if (s.end !== null) moments.push({ type: "speech_stopped", name: s.name, at: s.end });
  }
  return moments.sort((a, b) => a.at - b.at);
}

interface Timeline {
  started_at: string;
  participants: { id: string; name: string; joined_at: number | null; left_at: number | null }[];
  speech: { participant_id: string | null; start: number; end: number }[];
}

/** The timeline's own offset of what `event` announces (the same instant, on the same clock). */
function timelineOffset(timeline: Timeline, event: Json): number | undefined {
  const id = (event.participant as Json).id;
  const offset = Number(event.offset_seconds);
  const near = (v: number | null | undefined) => v !== null && v !== undefined && Math.abs(v - offset) <= 0.5;
  const turns = timeline.speech.filter((s) => s.participant_id === id);
  const p = timeline.participants.find((x) => x.id === id);
  switch (event.type) {
    case "speech_started":
      return turns.map((s) => s.start).find(near);
    case "speech_stopped":
      return turns.map((s) => s.end).find(near);
    case "participant_joined":
      return p?.joined_at ?? undefined;
    case "participant_left":
      return p?.left_at ?? undefined;
  }
  return undefined;
}

describe("live listening: the speaker timeline's events (real worker, sqlite)", { timeout: 600_000 }, () => {
  const cleanups = new Cleanups();
  after(() => cleanups.run());

  test("joins, leaves and turns reach the listener in the fixture's order, attributed, on the timeline's clock", async () => {
    const fixture = await startTeamsFixture();
    cleanups.context.after(() => fixture.close());
    const app = await startBotApp(cleanups.context, { worker: "real", bot: { MEETING_ALLOWED_HOSTS: fixture.hostPort } });
    const meeting = fixture.createMeeting({ lobby: false, people: script });
    const join = await app.request("POST", "/join", { body: { meeting_url: meeting.joinUrl, display_name: BOT_NAME } });
    assert.equal(join.status, 200, join.text);
    const id = String(((join.body as Json).session as Json).session_id);
    await waitForSession(app, id, (s) => s.status === "recording", 120_000);
    const listener = await openListener(app, id, { sample_rate: 16000, channels: 1 }, cleanups.context);
    const openedAt = Date.now();

    await meeting.waitForPhase("in_call");
    const admittedAt = (await fixtureLog(fixture.url, meeting.id)).admittedAt;
    assert.ok(admittedAt !== null);
    const first = admittedAt + Math.min(...script.flatMap((p) => [...(p.speak ?? []).map(([a]) => a), ...(p.joinAt ? [p.joinAt] : [])])) * 1000;
    assert.ok(openedAt < first - 1000, `the listener opened ${(openedAt - admittedAt) / 1000} s after the admission: too late for the first turn (raise DELAY_SECONDS)`);

    await sleep(admittedAt + (SCRIPT_SECONDS + DELAY_SECONDS) * 1000 - Date.now());
    const liveRes = await app.request("GET", `/sessions/${id}/timeline`);
    assert.equal(liveRes.status, 200, liveRes.text);
    const live = liveRes.body as Timeline;
    assert.equal((await app.request("POST", `/stop/${id}`)).status, 200);
    assert.deepEqual(await listener.closed, { code: CLOSE.normal, reason: CLOSE_REASON.sessionEnded });
    const done = await waitForSession(app, id, (s) => s.status === "stopped", 60_000);
    const stored = JSON.parse(await readFile(String(done.timeline_file), "utf8")) as Timeline;
    const fixtureNow = await fixtureLog(fixture.url, meeting.id);
    // The stored timeline is the fixture's meeting (#17's checks): the reference for the rest.
    assertTimeline(stored as unknown as Json, fixtureNow, { script });

    const events = listener.events.filter((e) => TIMELINE_EVENTS.has(String(e.type)));
    const why = JSON.stringify(listener.events);
    // Those already there at the admission (and the bot) are in the timeline, not announced.
    const expected = played(fixtureNow.log);
    assert.ok(expected.length >= 12, `the scenario's joins, leaves and turns: ${JSON.stringify(expected)}`);

    // In the order the fixture played them, each for the right person (name and timeline id).
    assert.deepEqual(
      events.map((e) => `${String(e.type)} ${String((e.participant as Json).name)}`),
      expected.map((m) => `${m.type} ${m.name}`),
      why,
    );
    for (const e of events) {
      const p = e.participant as Json;
      const listed = stored.participants.find((x) => x.name === p.name);
      assert.equal(p.id, listed?.id, `${String(p.name)}: the timeline's id`);
    }

    // On the recording's clock: rising, within #17's tolerance of the fixture's truth, and the
    // very instants of the timeline (the live route, on the same planned origin, to the 10 ms).
    const offsets = events.map((e) => Number(e.offset_seconds));
    offsets.forEach((o, i) => assert.ok(i === 0 || o > (offsets[i - 1] ?? 0), `offsets rise: ${offsets.join(" ")}`));
    const liveOrigin = Date.parse(live.started_at);
    events.forEach((e, i) => {
      const truth = ((expected[i]?.at ?? 0) - liveOrigin) / 1000;
      const tolerance = String(e.type).startsWith("speech") ? 0.5 : 2;
      assert.ok(Math.abs(Number(e.offset_seconds) - truth) <= tolerance, `${JSON.stringify(e)}: the fixture played it at ${truth.toFixed(2)}`);
      const inLive = timelineOffset(live, e);
      assert.ok(inLive !== undefined && Math.abs(inLive - Number(e.offset_seconds)) < 0.011, `${JSON.stringify(e)}: live timeline ${String(inLive)}`);
      // The stored file's offset 0 is the trimmed file's first sample, a few ms from the planned one.
      const shift = (Date.parse(stored.started_at) - liveOrigin) / 1000;
      const inFile = timelineOffset(stored, { ...e, offset_seconds: Number(e.offset_seconds) - shift });
      assert.ok(inFile !== undefined && Math.abs(inFile + shift - Number(e.offset_seconds)) < 0.021, `${JSON.stringify(e)}: stored timeline ${String(inFile)} + ${shift}`);
    });
    // Every attributed turn of the timeline was announced, once at each end.
    const turns = stored.speech.filter((s) => s.participant_id !== null);
    assert.equal(events.filter((e) => e.type === "speech_started").length, turns.length, why);
    assert.equal(events.filter((e) => e.type === "speech_stopped").length, turns.length, why);

    // Status first and last; audio flowing before, between and after the events: not batched.
    assert.deepEqual(listener.events[0], { type: "status", status: "recording" });
    assert.deepEqual(listener.events.at(-1), { type: "status", status: "stopped" });
    const firstEvent = listener.order.findIndex((o) => TIMELINE_EVENTS.has(o));
    const lastEvent = listener.order.findLastIndex((o) => TIMELINE_EVENTS.has(o));
    const between = listener.order.slice(firstEvent, lastEvent).filter((o) => o === "a").length;
    // The events span 13.5 s of the meeting: most of its 675 frames arrive between them.
    assert.ok(between >= 500, `${between} audio frames between the first and the last event`);
    assert.ok(listener.order.slice(0, firstEvent).includes("a") && listener.order.slice(lastEvent).includes("a"));
    assert.ok(listener.frames.every((f) => f.length === frameBytes({ sampleRate: 16000, channels: 1 })));
  });
});
