/**
 * Live listening through the page tap (no microphone) when the bot's processes die under it,
 * with the real worker: the browser killed outright ends the session `browser_crashed`, and the
 * listener gets the final status, then 1000 "session ended"; the worker killed outright ends it
 * `interrupted` with the same close; and none of the session's parecs (the page tap's check
 * against the sink, which listens while the meeting is silent) outlives either. So for the recorder's ffmpeg (`audio_failed`).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sessionPaths } from "../../control/bot/paths.ts";
import { CLOSE, CLOSE_REASON } from "../../shared/listen/protocol.ts";
import { listProcesses } from "../../shared/process/group.ts";
import { startBotApp, waitForSession, type BotApp } from "../bot/fixtures/bot-app.ts";
import { startTeamsFixture, type TeamsFixture } from "../fixture/teams/server.ts";
import { holdMediaLock } from "../harness/media-lock.ts";
import { Cleanups } from "../mic/helpers.ts";
import { openListener, sleep, waitFor, type Json, type Listener } from "./helpers.ts";

// Real Chromium, PulseAudio and ffmpeg: one such file at a time (see media-lock.ts).
await holdMediaLock();

describe("live listening when the bot's processes die (real worker, sqlite)", { timeout: 600_000, concurrency: false }, () => {
  const cleanups = new Cleanups();
  after(() => cleanups.run());
  let app: BotApp;
  let fixture: TeamsFixture;

  before(async () => {
    fixture = await startTeamsFixture();
    cleanups.context.after(() => fixture.close());
    app = await startBotApp(cleanups.context, { worker: "real", bot: { MEETING_ALLOWED_HOSTS: fixture.hostPort } });
  });

  /** A session in the call with a listener hearing it through the page tap, and the session's parecs. */
  const listening = async (): Promise<{ id: string; listener: Listener; parecs: number[] }> => {
    // A silent meeting: the page tap's mix holds no sound, so its check listens to the sink.
    const meeting = fixture.createMeeting({ lobby: false, tone: null });
    const join = await app.request("POST", "/join", { body: { meeting_url: meeting.joinUrl } });
    assert.equal(join.status, 200, join.text);
    const id = String(((join.body as Json).session as Json).session_id);
    await waitForSession(app, id, (s) => s.status === "recording", 120_000);
    const listener = await openListener(app, id, { sample_rate: 16000 }, cleanups.context);
    await waitFor("1 s of audio", () => listener.frames.length >= 50);
    const sessionParecs = async () => (await listProcesses()).filter((p) => p.cmdline.startsWith("parec") && p.cmdline.includes(id));
    const deadline = Date.now() + 15_000;
    let parecs = await sessionParecs();
    while (!parecs.some((p) => p.cmdline.includes("--stream-name=listen-check")) && Date.now() < deadline) {
      await sleep(200);
      parecs = await sessionParecs();
    }
    const streams = parecs.map((p) => /--stream-name=(\S+)/.exec(p.cmdline)?.[1]);
    // (It may also read a track in the page, with the sink paced: a pacer does not matter here.)
    assert.ok(streams.includes("listen-check"), `the page tap serves a silent mix: the sink is checked (${streams.join(", ")})`);
    return { id, listener, parecs: parecs.map((p) => p.pid) };
  };

  const gone = async (pids: number[]): Promise<void> => {
    const deadline = Date.now() + 10_000;
    while ((await listProcesses()).some((p) => pids.includes(p.pid))) {
      assert.ok(Date.now() < deadline, "a parec of the session outlived it by 10 s");
      await sleep(100);
    }
  };

  const isBrowser = (c: string) => /chromium/.test(c) && c.includes("--user-data-dir=") && !c.includes("--type=");
  const isRecorder = (c: string) => c.startsWith("ffmpeg") && c.includes("pulse");
  for (const c of [
    { what: "the browser", match: isBrowser, group: true, code: "browser_crashed" },
    { what: "the recorder's ffmpeg", match: isRecorder, group: false, code: "audio_failed" },
  ]) {
    test(`${c.what} killed outright: ${c.code}, the final status, then 1000`, async () => {
      const { id, listener, parecs } = await listening();
      const victim = (await listProcesses()).find((p) => p.cmdline.includes(id) && c.match(p.cmdline));
      assert.ok(victim, `the session's ${c.what}`);
      process.kill(c.group ? -victim.pid : victim.pid, "SIGKILL");
      assert.deepEqual(await listener.closed, { code: CLOSE.normal, reason: CLOSE_REASON.sessionEnded });
      assert.deepEqual(listener.events.at(-1), { type: "status", status: "error" });
      const done = await waitForSession(app, id, (s) => s.status === "error", 60_000);
      assert.equal(done.error_code, c.code);
      await gone(parecs);
    });
  }

  test("the worker killed outright: the final status interrupted, 1000, and its parecs go with it", async () => {
    const { id, listener, parecs } = await listening();
    const workDir = sessionPaths(app.recordingsDir, id, "wav").workDir;
    const worker = (await listProcesses()).find((p) => p.cmdline.includes(`--session-dir=${workDir}`));
    assert.ok(worker, "the session's worker");
    process.kill(worker.pid, "SIGKILL");
    assert.deepEqual(await listener.closed, { code: CLOSE.normal, reason: CLOSE_REASON.sessionEnded });
    assert.deepEqual(listener.events.at(-1), { type: "status", status: "interrupted" }, "told the end's status, as for any end");
    await waitForSession(app, id, (s) => s.status === "interrupted", 60_000);
    await gone(parecs);
  });
});
