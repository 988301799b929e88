/**
 * Issue #17 end to end (real worker: Chromium, PulseAudio, ffmpeg; the Teams fixture with
 * scripted participants over a real WebRTC mix): the timeline file beside the recording, the live
 * route while the session runs and the same answer after it ends, `timeline_file` on the status,
 * the list and the `finished` webhook, participant webhooks in order with the status events,
 * and 404 for an unknown session.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { basename, dirname, resolve } from "node:path";
import { describe, test } from "node:test";
import { randomUUID } from "node:crypto";
import { startTeamsFixture } from "../fixture/teams/server.ts";
import { startBotApp, waitForSession } from "../bot/fixtures/bot-app.ts";
import { startReceiver } from "../bot/fixtures/receiver.ts";
import { holdMediaLock } from "../harness/media-lock.ts";
import { assertTimeline, BOT_NAME, fixtureLog, SCRIPT, SCRIPT_SECONDS } from "./scenario.ts";

await holdMediaLock();

type Json = Record<string, unknown>;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("speaker timeline (real worker, sqlite)", { timeout: 600_000, concurrency: false }, () => {
  test("three speakers, an overlap, a leave and a late join: file, live route, webhooks", async (t) => {
    const fixture = await startTeamsFixture();
    t.after(() => fixture.close());
    const receiver = await startReceiver();
    t.after(() => receiver.close());
    const token = "timeline-token";
    const app = await startBotApp(t, {
      worker: "real",
      bot: { MEETING_ALLOWED_HOSTS: fixture.hostPort, WEBHOOK_URL: receiver.url, WEBHOOK_EVENTS: true, BOT_ACCESS_TOKEN: token },
    });
    const meeting = fixture.createMeeting({ lobby: true, people: SCRIPT });
    const join = await app.request("POST", "/join", { token, body: { meeting_url: meeting.joinUrl, reference: "tl-1", display_name: BOT_NAME } });
    assert.equal(join.status, 200, join.text);
    const id = String(((join.body as Json).session as Json).session_id);

    assert.equal((await app.request("GET", `/sessions/${id}/timeline`)).status, 401, "bearer as the other bot routes");
    assert.equal((await app.request("GET", `/sessions/${randomUUID()}/timeline`, { token })).status, 404);

    await meeting.waitForPhase("lobby", 120_000);
    meeting.admit();
    await waitForSession(app, id, (s) => s.status === "recording", 60_000, token);
    await sleep(9_000);
    const live = await app.request("GET", `/sessions/${id}/timeline`, { token });
    assert.equal(live.status, 200, live.text);
    const liveBody = live.body as Json;
    assert.equal(liveBody.session_id, id);
    assert.equal(liveBody.ended_at, null, "still running");
    const liveNames = (liveBody.participants as Json[]).map((p) => p.name);
    assert.ok(liveNames.includes("Ada Lovelace") && liveNames.includes("Grace Hopper"), JSON.stringify(liveBody));
    assert.ok((liveBody.speech as Json[]).some((s) => (liveBody.participants as Json[]).find((p) => p.id === s.participant_id)?.name === "Ada Lovelace"), `Ada's first turn is already there: ${JSON.stringify(liveBody)}`);

    await sleep((SCRIPT_SECONDS - 9) * 1000);
    await app.request("POST", `/stop/${id}`, { token });
    const done = await waitForSession(app, id, (s) => s.status === "stopped", 60_000, token);
    const recordingFile = String(done.recording_file);
    const timelineFile = String(done.timeline_file);
    assert.equal(dirname(timelineFile), resolve(app.recordingsDir), "beside the recording");
    assert.equal(basename(timelineFile), basename(recordingFile).replace(/\.wav$/, ".timeline.json"));
    assert.match(basename(timelineFile), new RegExp(`^${id}_\\d{8}_\\d{6}\\.timeline\\.json$`));

    const stored = JSON.parse(await readFile(timelineFile, "utf8")) as Json;
    assert.equal(stored.session_id, id);
    assert.equal(stored.reference, "tl-1");
    assert.equal(stored.recording_file, recordingFile);
    assert.ok(stored.ended_at);
    assertTimeline(stored, await fixtureLog(fixture.url, meeting.id));

    const after = await app.request("GET", `/sessions/${id}/timeline`, { token });
    assert.equal(after.status, 200);
    assert.deepEqual(after.body, stored, "the route answers the stored file after the end");

    const listed = await app.request("GET", `/sessions?reference=tl-1`, { token });
    assert.equal(((listed.body as { sessions: Json[] }).sessions[0] as Json).timeline_file, timelineFile);

    const finished = await receiver.waitFor((e) => e.event === "finished" && e.session_id === id);
    assert.equal(finished.timeline_file, timelineFile);
    const events = receiver.events.filter((e) => e.session_id === id).map((e) => e.event === "status_changed" ? `status:${String(e.status)}` : String(e.event));
    const joined = receiver.events.filter((e) => e.session_id === id && e.event === "participant_joined");
    const left = receiver.events.filter((e) => e.session_id === id && e.event === "participant_left");
    assert.deepEqual(joined.map((e) => (e.participant as Json).name), ["Katherine Johnson"], JSON.stringify(events));
    assert.deepEqual(left.map((e) => (e.participant as Json).name), ["Grace Hopper"], JSON.stringify(events));
    const kj = (stored.participants as Json[]).find((p) => p.name === "Katherine Johnson");
    assert.deepEqual(joined[0]?.participant, { id: kj?.id, name: "Katherine Johnson", label: "External" });
    assert.ok(Math.abs(Number(joined[0]?.offset_seconds) - Number(kj?.joined_at)) <= 1, `${String(joined[0]?.offset_seconds)} vs ${String(kj?.joined_at)}`);
    assert.equal(joined[0]?.reference, "tl-1");
    // In order with the status events: after `recording`, before the end.
    const at = (name: string) => events.indexOf(name);
    assert.ok(at("status:recording") < at("participant_joined") && at("participant_joined") < at("participant_left"), events.join(" "));
    assert.ok(at("participant_left") < at("status:stopped") && at("status:stopped") < at("finished"), events.join(" "));
  });

  test("without CSRCs in the mix, the tiles' speaking markers and the dominant speaker carry the timeline", async (t) => {
    const fixture = await startTeamsFixture();
    t.after(() => fixture.close());
    const app = await startBotApp(t, { worker: "real", bot: { MEETING_ALLOWED_HOSTS: fixture.hostPort } });
    const meeting = fixture.createMeeting({ lobby: false, people: SCRIPT, peopleSignals: { csrc: false } });
    const join = await app.request("POST", "/join", { body: { meeting_url: meeting.joinUrl, display_name: BOT_NAME } });
    const id = String(((join.body as Json).session as Json).session_id);
    await waitForSession(app, id, (s) => s.status === "recording", 120_000);
    await meeting.waitForPhase("in_call");
    await sleep(SCRIPT_SECONDS * 1000);
    await app.request("POST", `/stop/${id}`);
    const done = await waitForSession(app, id, (s) => s.status === "stopped", 60_000);
    const stored = JSON.parse(await readFile(String(done.timeline_file), "utf8")) as Json;
    assertTimeline(stored, await fixtureLog(fixture.url, meeting.id));
  });
});
