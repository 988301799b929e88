/**
 * Live listening against the Teams fixture with the real worker (Chromium, PulseAudio, ffmpeg,
 * parec) and real WebSockets: every listener hears the meeting's 440 Hz tone at its own rate and
 * channel count, in exact 20 ms frames, without a gap for 20 s; a listener that stops reading is
 * cut off with 1008 while another listener and the recording keep every sample and the server's
 * memory stays bounded; a slow listener loses only what it is told about (`overrun`); revoking
 * closes with 1000, and the session's end closes every listener with 1000 after the final status.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { CLOSE, CLOSE_REASON, frameBytes } from "../../shared/listen/protocol.ts";
import { LISTEN_AFTER_SILENT_MS } from "../../worker/listen/page-tap/cross-check.ts";
import { listProcesses } from "../../shared/process/group.ts";
import { waitForSession, type BotApp } from "../bot/fixtures/bot-app.ts";
import type { FixtureMeeting } from "../fixture/teams/server.ts";
import { findGaps, toneSpans } from "../helpers/audio/analysis.ts";
import { channel as wavChannel, readWav } from "../helpers/audio/wav.ts";
import { holdMediaLock } from "../harness/media-lock.ts";
import { Cleanups } from "../mic/helpers.ts";
import { channel, float, listen, openListener, sleep, toneHz, toneSession, waitFor, type Json, type Listener, type Received } from "./helpers.ts";

setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

// Real Chromium, PulseAudio and ffmpeg: one such file at a time (see media-lock.ts).
await holdMediaLock();

const TONE_HZ = 440;
const framesOf = (r: Received, from = 0) => channel(Buffer.concat(r.frames.slice(from)), 1);

describe("live listening (real worker, sqlite)", { timeout: 600_000, concurrency: false }, () => {
  const cleanups = new Cleanups();
  after(() => cleanups.run());
  let app: BotApp;
  let meeting: FixtureMeeting;
  let id = "";
  const open = (body: Json): Promise<Listener> => openListener(app, id, body, cleanups.context);
  const revoke = async (r: { token: string }) => assert.equal((await app.request("DELETE", `/audio/${id}/listen/${r.token}`)).status, 200);

  before(async () => {
    ({ app, meeting, id } = await toneSession(cleanups.context, { toneHz: TONE_HZ, displayName: "Listen Bot" }));
  });

  test("four listeners at four formats each hear the tone, in exact 20 ms frames, without a gap for 20 s", async (t) => {
    const formats = [
      { sample_rate: 8000, channels: 1 },
      { sample_rate: 16000, channels: 1 },
      { sample_rate: 24000, channels: 1 },
      { sample_rate: 48000, channels: 2 },
    ] as const;
    // Nobody listens yet: nothing paces the sink (LISTEN_LOW_LATENCY is off: low-latency.test.ts).
    const pacersBefore = (await listProcesses()).filter((p) => p.cmdline.includes("--stream-name=pacer") && p.cmdline.includes(id));
    assert.equal(pacersBefore.length, 0, "no pacer before anyone listens");
    const listeners: Listener[] = [];
    // A failure before the DELETEs below must not leave four tokens to refuse the next tests' listeners.
    t.after(() => Promise.all(listeners.map((r) => app.request("DELETE", `/audio/${id}/listen/${r.token}`))));
    for (const f of formats) listeners.push(await open({ ...f }));
    // The first second holds the resamplers' start; then a 20 s window of each listener's audio.
    await waitFor("1 s at every listener", () => listeners.every((r) => r.frames.length >= 50));
    // Without a microphone they hear the page tap, and the meeting's WebRTC audio by its encoded
    // path (worker/listen/page-tap/encoded-script.ts): its frames as they arrive, so nothing paces
    // the sink (worker/listen/sink-pacer.ts); nor is the sink listened to by the page tap's check
    // (cross-check.ts) while the tap's mix holds the tone.
    await sleep(LISTEN_AFTER_SILENT_MS + 1_000);
    const parecs = (await listProcesses()).filter((p) => p.cmdline.startsWith("parec") && p.cmdline.includes(id));
    const streams = parecs.map((p) => /--stream-name=(\S+)/.exec(p.cmdline)?.[1]).sort();
    assert.deepEqual(streams, [], "the page tap serves by its encoded path: the sink is neither paced nor checked");
    const starts = listeners.map((r) => r.frames.length);
    await waitFor("20 s more at every listener", () => listeners.every((r, i) => r.frames.length - (starts[i] ?? 0) >= 1000), 90_000);

    formats.forEach((f, i) => {
      const r = listeners[i] as Received;
      const label = `${f.sample_rate} Hz × ${f.channels}`;
      const bytes = frameBytes({ sampleRate: f.sample_rate, channels: f.channels });
      assert.ok(r.frames.every((fr) => fr.length === bytes), `${label}: every frame is ${bytes} bytes`);
      assert.deepEqual(r.events[0], { type: "status", status: "recording" }, label);
      assert.ok(!r.events.some((e) => e.type === "overrun"), `${label}: nothing dropped`);
      const window = Buffer.concat(r.frames.slice(starts[i], (starts[i] ?? 0) + 1000));
      for (let ch = 0; ch < f.channels; ch++) {
        const samples = channel(window, f.channels, ch);
        assert.equal(samples.length, f.sample_rate * 20, `${label}: 20 s of samples`);
        const hz = toneHz(samples, f.sample_rate);
        assert.ok(Math.abs(hz - TONE_HZ) < 3, `${label} ch${ch}: ${hz.toFixed(2)} Hz`);
        const pcm = float(samples);
        assert.deepEqual(findGaps(pcm, f.sample_rate, { minGapMs: 100 }), [], `${label} ch${ch}: gaps`);
        const spans = toneSpans(pcm, f.sample_rate, TONE_HZ);
        assert.equal(spans.length, 1, `${label} ch${ch}: one unbroken span of the tone: ${JSON.stringify(spans.slice(0, 5))}`);
      }
    });

    // A fifth listener is refused while four tokens live.
    const fifth = await app.request("POST", `/audio/${id}/listen`, { body: {} });
    assert.equal(fifth.status, 409);
    assert.equal(typeof (fifth.body as Json).detail, "string");

    // DELETE ends each one with 1000 and its token stops working.
    for (const r of listeners) {
      await revoke(r);
      assert.deepEqual(await r.closed, { code: CLOSE.normal, reason: CLOSE_REASON.revoked });
    }
    const again = listen(listeners[0]?.ws.url ?? "");
    await assert.rejects(again.opened, /HTTP 404/);
  });

  test("a listener that stops reading is cut off with 1008; the other keeps every sample; memory stays bounded", async () => {
    const healthy = await open({ sample_rate: 16000, channels: 1, events: false });
    // Three at 48 kHz stereo: 576 KB a second between them, so anything held per second stands far
    // above the 64 KB slabs that sockets allocate and free while the heap is measured.
    const stalled: Listener[] = [];
    for (let i = 0; i < 3; i++) stalled.push(await open({ sample_rate: 48000, channels: 2, events: false }));
    await waitFor("audio at the stalled ones", () => stalled.every((s) => s.frames.length >= 10));
    const readBefore = stalled.map((s) => s.frames.length);
    const healthyFrom = healthy.frames.length;
    for (const s of stalled) s.ws.pause();
    const pausedAt = Date.now();

    // What this process holds beyond the healthy listener's kept frames: the least of three looks,
    // so a socket slab in use at one instant does not count as held.
    const held = async () => {
      const looks: number[] = [];
      for (let i = 0; i < 3; i++) {
        collectGarbage();
        looks.push(process.memoryUsage().arrayBuffers - healthy.frames.reduce((n, f) => n + f.length, 0));
        await sleep(100);
      }
      return Math.min(...looks);
    };
    // Flight (1 s) and queue (1 s) are full after ~2 s; from then on nothing more may be held.
    await sleep(2_200);
    const held0 = await held();
    await sleep(1_700);
    const held1 = await held();
    // Unbounded, these 2 s would have added 1,152 KB.
    assert.ok(held1 - held0 < 400_000, `held ${held0} then ${held1} bytes`);

    await waitFor("the cut-offs", () => app.logs.lines.filter((l) => l.includes("listener fell behind")).length >= 3, 20_000);
    const cutAfter = Date.now() - pausedAt;
    // Still not reading well past the close handshake's 3 s: the close frame, behind a second of
    // 48 kHz stereo that loopback's socket buffers cannot all take, must still reach them.
    await sleep(5_000);
    for (const [i, s] of stalled.entries()) {
      s.ws.resume();
      assert.deepEqual(await s.closed, { code: CLOSE.tooSlow, reason: CLOSE_REASON.tooSlow });
      // Told what it lost, also without events: the dropped seconds and the queued one.
      const overruns = s.events.filter((e) => e.type === "overrun");
      assert.equal(overruns.length, 1, JSON.stringify(s.events));
      assert.ok(Number(overruns[0]?.dropped_ms) >= 3000, JSON.stringify(overruns));
      // What it read before it stopped, plus at most the 1 s in flight: nothing was buffered for it.
      assert.ok(s.frames.length <= (readBefore[i] ?? 0) + 60, `${s.frames.length} frames after ${readBefore[i]}`);
    }

    // The healthy listener went on through all of it, without a gap or a lost frame.
    await waitFor("1 s more at the healthy listener", () => healthy.frames.length - healthyFrom >= (cutAfter + 1000) / 20);
    assert.ok(!healthy.events.some((e) => e.type === "overrun"));
    const pcm = float(framesOf(healthy, healthyFrom));
    assert.deepEqual(findGaps(pcm, 16000, { minGapMs: 100 }), []);
    assert.equal(toneSpans(pcm, 16000, TONE_HZ).length, 1);
    await revoke(healthy);
    for (const s of stalled) await revoke(s);
  });

  test("a slow listener loses only the oldest audio and is told exactly how much", async () => {
    const reference = await open({ sample_rate: 16000, channels: 1, events: false });
    await waitFor("audio", () => reference.frames.length >= 10);
    const refFrom = reference.frames.length;
    const slow = await open({ sample_rate: 16000, channels: 1, events: false });
    const refAtOpen = reference.frames.length;
    // Reads in bursts: 2.6 s asleep (more than the 1 s in flight + 1 s queued), 0.5 s awake.
    for (let i = 0; i < 3; i++) {
      slow.ws.pause();
      await sleep(2_600);
      slow.ws.resume();
      await sleep(500);
    }
    await sleep(1_500);
    const overruns = slow.events.filter((e) => e.type === "overrun");
    assert.ok(overruns.length >= 1, JSON.stringify(slow.events));
    const dropped = overruns.reduce((sum, e) => sum + Number(e.dropped_ms), 0);
    assert.ok(overruns.every((e) => Number(e.dropped_ms) > 0 && Number(e.dropped_ms) % 20 === 0), JSON.stringify(overruns));
    assert.equal(slow.ws.readyState, slow.ws.OPEN, "a listener that catches up stays connected");
    // Received + announced as dropped = what a listener reading all along got over the same time.
    const accounted = slow.frames.length + dropped / 20;
    const reference_ = reference.frames.length - refAtOpen;
    assert.ok(Math.abs(accounted - reference_) <= 5, `slow: ${slow.frames.length} + ${dropped / 20} dropped; reference ${reference_}`);
    // The reference listener lost nothing while the other lagged.
    assert.deepEqual(findGaps(float(framesOf(reference, refFrom)), 16000, { minGapMs: 100 }), []);
    await revoke(slow);
    await revoke(reference);
  });

  test("the session's end: the final status, then 1000; the recording kept every sample throughout", async () => {
    const last = await open({ sample_rate: 16000, channels: 1 });
    await waitFor("audio", () => last.frames.length >= 10);
    assert.equal((await app.request("POST", `/stop/${id}`)).status, 200);
    assert.deepEqual(await last.closed, { code: CLOSE.normal, reason: CLOSE_REASON.sessionEnded });
    assert.deepEqual(last.events.at(-1), { type: "status", status: "stopped" });
    const after_ = listen(last.url);
    await assert.rejects(after_.opened, /HTTP 404/);

    const done = await waitForSession(app, id, (s) => s.status === "stopped", 60_000);
    const wav = await readWav(String(done.recording_file));
    const left = wavChannel(wav, 0);
    assert.deepEqual(findGaps(left, wav.sampleRate, { minGapMs: 100 }), []);
    assert.equal(toneSpans(left, wav.sampleRate, TONE_HZ).length, 1);
    // Listening took nothing away: the file is as long as the call.
    const state = meeting.state();
    const inCall = (Date.parse(state.leftAt ?? "") - Date.parse(state.joinedAt ?? "")) / 1000;
    assert.ok(Math.abs(wav.durationSec - inCall) <= 1, `file ${wav.durationSec} s, in call ${inCall} s`);
  });
});
