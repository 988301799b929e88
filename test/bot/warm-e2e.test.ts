/**
 * The warm pool and the video guard with the real worker (Chromium, PulseAudio, ffmpeg) against
 * the fixture's realistic meeting (three cameras, a changing page): the join runs on the warm
 * worker's Chromium, the bot's page decodes no video, the recording holds the meeting's tone; a
 * warm Chromium that dies is replaced; shutdown leaves no chromium or pulseaudio behind.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { listProcesses } from "../../shared/process/group.ts";
import { holdMediaLock } from "../harness/media-lock.ts";
import { startTeamsFixture } from "../fixture/teams/server.ts";
import { startBotApp, waitForSession } from "./fixtures/bot-app.ts";
import { hear } from "./fixtures/media.ts";
import { waitForWorkers } from "./fixtures/warm.ts";

await holdMediaLock();

type Json = Record<string, unknown>;

/** Chromium and PulseAudio processes whose command line names `dir`. */
async function mediaProcesses(dir: string): Promise<{ pid: number; cmdline: string }[]> {
  return (await listProcesses()).filter((p) => p.cmdline.includes(dir) && /chromium|pulseaudio/.test(p.cmdline)).map(({ pid, cmdline }) => ({ pid, cmdline }));
}

/** The warm worker's Chromium is up once a browser process names its folder. */
async function warmChromium(dir: string, id: string, timeoutMs = 90_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const main = (await mediaProcesses(dir)).find((p) => p.cmdline.includes(`${id}.work/chromium-profile-`) && !p.cmdline.includes("--type="));
    if (main) return main.pid;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`no Chromium for warm worker ${id}`);
}

/** The warm worker's record primer (worker/audio/record-primer.ts): its parec writing to /dev/null. */
async function primers(workerPid: number): Promise<number[]> {
  return (await listProcesses()).filter((p) => p.ppid === workerPid && p.cmdline.startsWith("parec ") && p.cmdline.endsWith(" /dev/null")).map((p) => p.pid);
}

describe("warm pool with the real worker", { timeout: 600_000, concurrency: false }, () => {
  test("a join on a warm worker in a meeting with video: no frame decoded, the recording intact, shutdown leaves nothing", async (t) => {
    const fixture = await startTeamsFixture();
    t.after(() => fixture.close());
    const app = await startBotApp(t, { worker: "real", bot: { WARM_WORKERS: 1, MEETING_ALLOWED_HOSTS: fixture.hostPort } });
    const [warm] = await waitForWorkers(app.recordingsDir, (w) => w.length === 1 && w[0]!.warm, 90_000);
    assert.ok(warm);
    const chromiumPid = await warmChromium(app.recordingsDir, warm.id);
    // While it waits, a primer keeps the recording sink's clock short (the recorder opens at once).
    for (let i = 0; i < 100 && (await primers(warm.pid)).length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal((await primers(warm.pid)).length, 1, "one record primer while warm");

    const meeting = fixture.createMeeting({ lobby: false, video: { streams: 3, width: 640, height: 360, fps: 15 }, churn: true, tone: { frequency: 440 } });
    const join = await app.request("POST", "/join", { body: { meeting_url: meeting.joinUrl, display_name: "Warm Bot" } });
    assert.equal(join.status, 200, join.text);
    const id = String(((join.body as Json).session as Json).session_id);
    assert.equal(id, warm.id, "the session runs on the warm worker");
    await waitForSession(app, id, (s) => s.status === "recording", 120_000);
    // The browser that joined is the one started before the join.
    assert.ok((await listProcesses()).some((p) => p.pid === chromiumPid), "the warm Chromium is still the session's");
    // The recorder's own stream keeps the sink's clock now: the primer is gone.
    assert.deepEqual(await primers(warm.pid), [], "the primer stops once the recorder is open");

    const deadline = Date.now() + 60_000;
    while (meeting.state().mediaReports < 6 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
    const state = meeting.state();
    assert.ok(state.media, "the bot's page reported its media");
    assert.equal(state.media.framesDecoded, 0, JSON.stringify(state.media));
    assert.equal(state.media.videoReceiversActive, 0);
    assert.ok(state.media.audioPacketsReceived > 0);

    // The pool refills while the session records.
    await waitForWorkers(app.recordingsDir, (w) => w.some((x) => x.warm && x.id !== id), 90_000);

    const stop = await app.request("POST", `/stop/${id}`);
    const s = (stop.body as { session: Json }).session;
    const done = s.status === "stopped" ? s : await waitForSession(app, id, (x) => x.status === "stopped", 60_000);
    const heard = await hear(String(done.recording_file));
    assert.ok(heard.durationSec > 3, `duration ${heard.durationSec}`);
    assert.ok(Math.abs(heard.frequency - 440) <= 10, `frequency ${heard.frequency}`);

    await app.close();
    assert.deepEqual(await mediaProcesses(app.recordingsDir), [], "no chromium or pulseaudio after shutdown");
  });

  test("a warm worker whose Chromium dies is replaced, and leaves no process behind", async (t) => {
    const app = await startBotApp(t, { worker: "real", bot: { WARM_WORKERS: 1 } });
    const [warm] = await waitForWorkers(app.recordingsDir, (w) => w.length === 1 && w[0]!.warm, 90_000);
    assert.ok(warm);
    const chromiumPid = await warmChromium(app.recordingsDir, warm.id);
    // While it waits, a primer keeps the recording sink's clock short (the recorder opens at once).
    for (let i = 0; i < 100 && (await primers(warm.pid)).length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal((await primers(warm.pid)).length, 1, "one record primer while warm");
    process.kill(chromiumPid, "SIGKILL");
    const [next] = await waitForWorkers(app.recordingsDir, (w) => w.length === 1 && w[0]!.id !== warm.id, 90_000);
    assert.ok(next?.warm);
    await warmChromium(app.recordingsDir, next.id);
    assert.deepEqual(await mediaProcesses(`${warm.id}.work`), []);
  });
});
