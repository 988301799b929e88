// In-call behaviour of the adapter (watchCall, leave, mute, noise suppression) and the fixture's
// call audio, in a real headless Chromium. The fake capture device gives the page a microphone.
import assert from "node:assert/strict";
import { after, before, test, type TestContext } from "node:test";
import type { MeetingOptions } from "../fixture/teams/server.ts";
import { disableNoiseSuppression, joinMeeting, leaveMeeting, setMicMuted, watchCall } from "../../worker/teams/index.ts";
import { newPage, startHarness, stopHarness, type Harness } from "./harness.ts";
import { holdMediaLock } from "../harness/media-lock.ts";

// Real Chromium, PulseAudio and ffmpeg: one such file at a time (see media-lock.ts).
await holdMediaLock();

let h: Harness | undefined;
before(async () => (h = await startHarness(["--use-fake-device-for-media-stream"])));
after(() => stopHarness(h));

const TIMEOUT = { timeout: 60_000 };
/** Faster than the product's 1 s so the tests stay short; the count of checks is what matters. */
const FAST = { intervalMs: 200 };

async function inCall(t: TestContext, options: Partial<MeetingOptions> = {}) {
  assert.ok(h);
  const { fixture, logger } = h;
  const meeting = fixture.createMeeting({ lobby: false, ...options });
  const page = await newPage(t, h);
  const outcome = await joinMeeting(page, { url: meeting.joinUrl, displayName: "Bot", logger, timeoutMs: 30_000 });
  assert.equal(outcome.kind, "in_call", JSON.stringify(outcome));
  return { meeting, page, logger };
}

test("alone after the count drops to 1 for five checks", TIMEOUT, async (t) => {
  const { meeting, page, logger } = await inCall(t, { participants: 3 });
  const counts: Array<number | null> = [];
  const started = Date.now();
  const watch = watchCall(page, { logger, ...FAST, onParticipants: (c) => counts.push(c) });
  setTimeout(() => meeting.setParticipants(1), 1000);
  assert.equal(await watch, "alone");
  assert.deepEqual(counts, [3, 1]);
  // Five checks 200 ms apart after the drop: at least 4 intervals past the 1 s mark.
  assert.ok(Date.now() - started >= 1000 + 4 * FAST.intervalMs);
});

test("no badge: unknown is not alone; the roster gives the count", TIMEOUT, async (t) => {
  const { meeting, page, logger } = await inCall(t, { participants: 2, hideBadge: true });
  const seen: Array<[number | null, string | null]> = [];
  const watch = watchCall(page, { logger, ...FAST, onParticipants: (c, s) => seen.push([c, s]) });
  setTimeout(() => meeting.setParticipants(1), 1500);
  assert.equal(await watch, "alone");
  assert.deepEqual(seen[0], [null, null]);
  assert.ok(seen.some(([c, s]) => c === 2 && s === "roster"), JSON.stringify(seen));
});

test("removed from the meeting", TIMEOUT, async (t) => {
  const { meeting, page, logger } = await inCall(t);
  const watch = watchCall(page, { logger, ...FAST });
  setTimeout(() => meeting.remove(), 800);
  assert.equal(await watch, "removed");
});

test("meeting ended", TIMEOUT, async (t) => {
  const { meeting, page, logger } = await inCall(t);
  const watch = watchCall(page, { logger, ...FAST });
  setTimeout(() => meeting.end(), 800);
  assert.equal(await watch, "meeting_ended");
});

test("leave: the fixture sees the guest leave", TIMEOUT, async (t) => {
  const { meeting, page, logger } = await inCall(t);
  const result = await leaveMeeting(page, logger);
  assert.equal(result.ok, true);
  const state = await meeting.waitForPhase("left", 5000);
  assert.ok(state.leftAt);
});

test("mute, unmute, noise suppression off; the meeting hears the mic only unmuted", TIMEOUT, async (t) => {
  const { meeting, page, logger } = await inCall(t);
  assert.equal(meeting.state().muted, true);
  const ns = await disableNoiseSuppression(page, logger);
  assert.equal(ns.ok, true, JSON.stringify(ns));
  assert.equal(meeting.state().noiseSuppression, "off");

  assert.deepEqual((await setMicMuted(page, false, logger)).ok, true);
  assert.equal(meeting.state().muted, false);
  const unmutedAt = Date.now();
  await new Promise((r) => setTimeout(r, 3000));
  assert.ok(meeting.state().micLevels.some((l) => l.heard && l.at >= unmutedAt), "the fake mic's beeps were heard");

  assert.equal((await setMicMuted(page, true, logger)).ok, true);
  assert.equal(meeting.state().muted, true);
  const mutedAt = Date.now() + 500; // levels measured just before the click may still arrive
  await new Promise((r) => setTimeout(r, 1500));
  const afterMute = meeting.state().micLevels.filter((l) => l.at >= mutedAt);
  assert.ok(afterMute.length > 0 && afterMute.every((l) => !l.heard));
});

// Peak frequency of what the page's <audio> element receives, measured in the page.
const MEASURE_TONE = `(async () => {
  const audio = document.querySelector('audio[data-tid="remote-audio"]');
  if (!audio || !audio.srcObject) return { playing: false, peak: 0 };
  const ctx = new AudioContext();
  const analyser = ctx.createAnalyser();
  analyser.fftSize = 8192;
  ctx.createMediaStreamSource(audio.srcObject).connect(analyser);
  await ctx.resume();
  await new Promise((r) => setTimeout(r, 1500));
  const bins = new Float32Array(analyser.frequencyBinCount);
  analyser.getFloatFrequencyData(bins);
  let peak = 1;
  for (let i = 2; i < bins.length; i++) if (bins[i] > bins[peak]) peak = i;
  const result = { playing: !audio.paused, peak: (peak * ctx.sampleRate) / analyser.fftSize, level: bins[peak] };
  await ctx.close();
  return result;
})()`;

test("the call's <audio> element plays the meeting's tone through the WebRTC loopback", TIMEOUT, async (t) => {
  const { page } = await inCall(t, { tone: { frequency: 523 } });
  await page.waitForFunction(`document.querySelector('audio[data-tid="remote-audio"]')?.srcObject != null`, undefined, { timeout: 10_000 });
  const m = (await page.evaluate(MEASURE_TONE)) as { playing: boolean; peak: number; level: number };
  assert.equal(m.playing, true);
  assert.ok(Math.abs(m.peak - 523) < 15, JSON.stringify(m));
  assert.ok(m.level > -60, JSON.stringify(m));
});
