/**
 * LISTEN_LOW_LATENCY (worker/listen/sink-pacer.ts, IDLE_PACE_MS) with the real worker against the
 * Teams fixture: without a microphone the recording's sink is paced at 50 ms from before the join,
 * while nobody listens; a listener makes it 20 ms while it listens (and hears the meeting), and
 * when it leaves the sink goes back to 50 ms. Without the setting (audio.test.ts) nothing paces
 * the sink until someone listens. All of this is for a page tap that reads the page's tracks,
 * which the encoded path makes the exception (encoded-path.test.ts: a page that refuses it).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { listProcesses } from "../../shared/process/group.ts";
import { waitForSession, type BotApp } from "../bot/fixtures/bot-app.ts";
import { holdMediaLock } from "../harness/media-lock.ts";
import { Cleanups } from "../mic/helpers.ts";
import { channel, openListener, sleep, toneHz, toneSession, waitFor } from "./helpers.ts";

// Real Chromium, PulseAudio and ffmpeg: one such file at a time (see media-lock.ts).
await holdMediaLock();

// The setting is for listeners who hear tracks read in the page (a page that refuses the page
// tap's encoded path, which does not depend on the sink's pacing at all): its workers take that path.
process.env.TOAMAISUTAA_LISTEN_ENCODED = "0";

const TONE_HZ = 440;

describe("LISTEN_LOW_LATENCY (real worker)", { timeout: 300_000, concurrency: false }, () => {
  const cleanups = new Cleanups();
  after(() => cleanups.run());
  let app: BotApp;
  let id = "";

  /** The block (ms) of every sink pacer of this session now running. */
  const pacerBlocks = async (): Promise<number[]> =>
    (await listProcesses())
      .filter((p) => p.cmdline.startsWith("parec") && p.cmdline.includes("--stream-name=pacer") && p.cmdline.includes(id))
      .map((p) => Number(/--latency-msec=(\d+)/.exec(p.cmdline)?.[1]))
      .sort((a, b) => a - b);
  const untilBlocks = async (want: number[], what: string): Promise<void> => {
    const deadline = Date.now() + 15_000;
    let now = await pacerBlocks();
    while (JSON.stringify(now) !== JSON.stringify(want)) {
      assert.ok(Date.now() < deadline, `${what}: pacers ${JSON.stringify(now)}, want ${JSON.stringify(want)}`);
      await sleep(100);
      now = await pacerBlocks();
    }
  };

  before(async () => {
    ({ app, id } = await toneSession(cleanups.context, { toneHz: TONE_HZ, displayName: "Low Latency Bot", bot: { LISTEN_LOW_LATENCY: true } }));
  });

  test("the sink is paced at 50 ms while nobody listens, at 20 ms while someone does, and at 50 ms again after", async () => {
    await untilBlocks([50], "in the call, nobody listening");
    const listener = await openListener(app, id, { sample_rate: 16000, channels: 1, events: false }, cleanups.context);
    await untilBlocks([20], "while listening");
    await waitFor("2 s of audio", () => listener.frames.length >= 150, 30_000);
    const heard = channel(Buffer.concat(listener.frames.slice(-100)), 1);
    assert.ok(Math.abs(toneHz(heard, 16000) - TONE_HZ) < 3, "the listener hears the meeting");
    assert.equal((await app.request("DELETE", `/audio/${id}/listen/${listener.token}`)).status, 200);
    await listener.closed;
    await untilBlocks([50], "after the listener left");
  });

  test("the session's end stops the pacer with everything else", async () => {
    assert.equal((await app.request("POST", `/stop/${id}`)).status, 200);
    await waitForSession(app, id, (s) => s.status === "stopped", 60_000);
    await untilBlocks([], "after the stop");
  });
});
