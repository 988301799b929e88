/**
 * The timeline survives crashes (issue #17), real worker against the scripted fixture meeting:
 * a SIGKILLed worker, and a SIGKILLed control plane replaced by a new one on the same data; both
 * sessions end `interrupted` with the timeline up to the crash stored beside the repaired
 * recording, its offsets on that recording's clock.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { describe, test } from "node:test";
import { startTeamsFixture } from "../fixture/teams/server.ts";
import { startBotApp, waitForSession } from "../bot/fixtures/bot-app.ts";
import { startControlPlane, waitStatus, type ControlPlane } from "../bot/fixtures/control-plane.ts";
import { workerPid } from "../bot/fixtures/media.ts";
import { holdMediaLock } from "../harness/media-lock.ts";
import { probeDuration } from "../../shared/recording/index.ts";
import { assertTimeline, BOT_NAME, fixtureLog, SCRIPT } from "./scenario.ts";

await holdMediaLock();

type Json = Record<string, unknown>;
/** Seconds into the call: after the overlap began, with the late joiner in. */
const KILL_AFTER_MS = 12_500;

function assertBeside(s: Json, id: string): void {
  const recording = basename(String(s.recording_file));
  assert.match(recording, new RegExp(`^${id}_\\d{8}_\\d{6}\\.wav$`));
  assert.equal(basename(String(s.timeline_file)), recording.replace(/\.wav$/, ".timeline.json"));
}

/**
 * Offset 0 is the stored file's first sample: the file lasts as long as the timeline (the repaired
 * recording is cut at the admission, and its timeline must count from the cut, not ffmpeg's start).
 */
async function assertSameClock(s: Json, timeline: Json): Promise<void> {
  const fileSec = await probeDuration(String(s.recording_file));
  assert.ok(fileSec !== null, "the recording probes");
  const timelineSec = (Date.parse(String(timeline.ended_at)) - Date.parse(String(timeline.started_at))) / 1000;
  assert.ok(Math.abs(fileSec - timelineSec) < 1.5, `file ${fileSec} s, timeline ${timelineSec} s (${String(timeline.started_at)} → ${String(timeline.ended_at)})`);
}

describe("speaker timeline after crashes (real worker, sqlite)", { timeout: 900_000, concurrency: false }, () => {
  test("SIGKILL of the worker: interrupted, the timeline up to the kill", async (t) => {
    const fixture = await startTeamsFixture();
    t.after(() => fixture.close());
    const app = await startBotApp(t, { worker: "real", bot: { MEETING_ALLOWED_HOSTS: fixture.hostPort } });
    // A lobby: several seconds of the file that the repair's trim cuts.
    const meeting = fixture.createMeeting({ lobby: true, people: SCRIPT });
    const join = await app.request("POST", "/join", { body: { meeting_url: meeting.joinUrl, display_name: BOT_NAME } });
    const id = String(((join.body as Json).session as Json).session_id);
    await meeting.waitForPhase("lobby");
    await new Promise((r) => setTimeout(r, 4000));
    meeting.admit();
    await waitForSession(app, id, (s) => s.status === "recording", 120_000);
    await meeting.waitForPhase("in_call");
    await new Promise((r) => setTimeout(r, KILL_AFTER_MS));
    const pid = await workerPid(id);
    assert.ok(pid, "worker found");
    const killedAt = Date.now();
    process.kill(pid, "SIGKILL");
    const done = await waitForSession(app, id, (s) => s.status === "interrupted", 60_000);
    assertBeside(done, id);
    const stored = JSON.parse(await readFile(String(done.timeline_file), "utf8")) as Json;
    assertTimeline(stored, await fixtureLog(fixture.url, meeting.id), { until: killedAt });
    await assertSameClock(done, stored);
    assert.ok(Date.parse(String(stored.ended_at)) <= killedAt + 100, `ended ${String(stored.ended_at)}, killed ${new Date(killedAt).toISOString()}`);
  });

  test("SIGKILL of the control plane: the next start stores the timeline with the recording", async (t) => {
    const dir = mkdtempSync(join(tmpdir(), "timeline-crash-"));
    const fixture = await startTeamsFixture();
    t.after(() => fixture.close());
    const env = { DATABASE_URL: `file:${join(dir, "app.db")}`, RECORDINGS_DIR: join(dir, "rec"), MEETING_ALLOWED_HOSTS: fixture.hostPort };
    const planes: ControlPlane[] = [];
    t.after(async () => {
      for (const p of planes) if (p.proc.exitCode === null) p.proc.kill("SIGKILL");
    });
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const first = await startControlPlane(env);
    planes.push(first);
    const meeting = fixture.createMeeting({ lobby: false, people: SCRIPT });
    const joined = await first.request("POST", "/join", { meeting_url: meeting.joinUrl, display_name: BOT_NAME });
    const id = String((joined.body.session as Json).session_id);
    await waitStatus(first, id, (s) => s.status === "recording");
    await meeting.waitForPhase("in_call");
    await new Promise((r) => setTimeout(r, KILL_AFTER_MS));
    const killedAt = Date.now();
    first.proc.kill("SIGKILL");
    await first.exited;

    const second = await startControlPlane(env);
    planes.push(second);
    const s = await waitStatus(second, id, (x) => x.status === "interrupted", 60_000);
    assertBeside(s, id);
    const stored = JSON.parse(await readFile(String(s.timeline_file), "utf8")) as Json;
    assertTimeline(stored, await fixtureLog(fixture.url, meeting.id), { until: killedAt });
    await assertSameClock(s, stored);
    const route = await second.request("GET", `/sessions/${id}/timeline`);
    assert.deepEqual(route.body, stored);
    second.proc.kill("SIGTERM");
    assert.equal(await second.exited, 0);
  });
});
