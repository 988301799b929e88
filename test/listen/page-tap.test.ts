/**
 * The page tap in a real browser (worker/listen/page-tap): what a page plays reaches a listener's
 * socket in its format, before the browser's 500 ms PulseAudio buffer: a WebRTC track played by
 * a media element (as Teams plays `mainAudio`), at the element's volume; nothing of an element
 * that is muted, and silence rather than nothing meanwhile; Web Audio played to a context's
 * destination; and a frame that plays audio (of the page's site or another's) makes the tap give
 * way to the sink's.
 */
import assert from "node:assert/strict";
import { createServer as createHttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { after, before, describe, test, type TestContext } from "node:test";
import type { Page } from "playwright-core";
import { createLogger } from "../../shared/log/logger.ts";
import type { ListenFormat } from "../../shared/listen/protocol.ts";
import { startPulse, type PulseDaemon } from "../../worker/audio/pulse.ts";
import { launchBrowser, type BrowserHandle } from "../../worker/browser/launch.ts";
import { MISSED_AUDIO } from "../../worker/listen/page-tap/cross-check.ts";
import { PageTap, installPageTap } from "../../worker/listen/page-tap/tap.ts";
import { AudioTaps } from "../../worker/listen/taps.ts";
import { dominantFrequency } from "../helpers/audio/analysis.ts";
import { toneWav } from "../helpers/audio/wav.ts";
import { webrtcTonePage } from "../helpers/audio/webrtc-tone-page.ts";
import { holdMediaLock } from "../harness/media-lock.ts";
import { socketPair, type Reader } from "./tap-socket.ts";

// Real Chromium and PulseAudio: one such file at a time (see media-lock.ts).
await holdMediaLock();

const logger = createLogger({ level: process.env.LOG_LEVEL ?? "silent" });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A 440 Hz oscillator sent over an RTCPeerConnection loopback and played by an <audio>. */
const WEBRTC_PAGE = webrtcTonePage(440);

/** A 660 Hz oscillator connected straight to an AudioContext's destination. */
const WEB_AUDIO_PAGE = `<body><script>
  const ctx = new AudioContext();
  const osc = ctx.createOscillator();
  osc.frequency.value = 660;
  const gain = ctx.createGain();
  gain.gain.value = 0.5;
  osc.connect(gain).connect(ctx.destination);
  osc.start();
  window.ready = ctx.resume();
</script></body>`;

/**
 * A 440 Hz tone the page tap's hooks do not see: an element inside a declarative shadow root,
 * started by its `autoplay` attribute (its media events stop at the shadow root), looping a WAV.
 */
const HIDDEN_PAGE = `<body><div><template shadowrootmode="closed"><audio autoplay loop src="data:audio/wav;base64,${toneWav(440, 1).toString("base64")}"></audio></template></div></body>`;

/** The same element in a closed shadow root made by script: the page tap hears it itself. */
const SCRIPTED_SHADOW_PAGE = `<body><div id="host"></div><script>
  document.getElementById("host").attachShadow({ mode: "closed" }).innerHTML = '<audio autoplay loop src="data:audio/wav;base64,${toneWav(440, 1).toString("base64")}"></audio>';
</script></body>`;

/** The WebRTC tone played inside a same-origin frame. */
const FRAME_PAGE = `<body><iframe srcdoc="${WEBRTC_PAGE.replaceAll('"', "&quot;")}"></iframe></body>`;

const samples = (pcm: Buffer, from: number): Float32Array => {
  const out = new Float32Array(Math.floor((pcm.length - from) / 2));
  for (let i = 0; i < out.length; i++) out[i] = pcm.readInt16LE(from + i * 2) / 32768;
  return out;
};
const rms = (xs: Float32Array) => Math.sqrt(xs.reduce((a, v) => a + v * v, 0) / Math.max(1, xs.length));

/** Waits (up to 15 s) until the last quarter second a listener received is loud. */
async function untilHeard(reader: Reader, rate: number, channels = 1): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const pcm = reader.pcm();
    if (rms(samples(pcm, Math.max(0, pcm.length - (rate / 4) * channels * 2))) > 0.2) return;
    assert.ok(Date.now() < deadline, `no tone within 15 s (${reader.bytes} bytes received)`);
    await sleep(100);
  }
}

describe("page tap (real Chromium and PulseAudio)", { timeout: 180_000 }, () => {
  let browser: BrowserHandle;
  let dir: string;

  /** A page with a tap bound, at `url` (or, for html, a data: URL of it). */
  const tapOn = async (t: TestContext, url: string): Promise<{ page: Page; tap: PageTap; uncapturable: string[] }> => {
    const context = browser.page.context();
    const page = await context.newPage();
    t.after(() => page.close());
    const uncapturable: string[] = [];
    const tap = new PageTap({ page, logger, onUncapturable: (why) => uncapturable.push(why) });
    await tap.bind();
    t.after(() => tap.stop());
    await page.goto(url.startsWith("http") ? url : `data:text/html,${encodeURIComponent(url)}`);
    await page.evaluate(() => (window as unknown as { ready?: Promise<unknown> }).ready);
    return { page, tap, uncapturable };
  };

  const listen = async (t: TestContext, tap: PageTap, format: ListenFormat): Promise<Reader> => {
    const { tapEnd, reader } = await socketPair(t, dir);
    assert.ok(tap.open(format, tapEnd), "the page tap serves");
    return reader;
  };

  let pulse: PulseDaemon;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "page-tap-"));
    pulse = await startPulse({ dir, logger, mic: false });
    browser = await launchBrowser({ dir, pulseEnv: pulse.env, logger, mic: false });
    await installPageTap(browser.page.context());
  });
  after(async () => {
    await browser?.close();
    await pulse?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test("a WebRTC track played by an <audio> reaches the listener at its rate, at the element's volume", async (t) => {
    const { page, tap } = await tapOn(t, WEBRTC_PAGE);
    const reader = await listen(t, tap, { sampleRate: 16_000, channels: 1 });
    // The loopback call's track starts when the box lets it: wait for the tone, then a second more.
    await untilHeard(reader, 16_000);
    await sleep(1_000);
    const pcm = reader.pcm();
    const full = samples(pcm, Math.max(0, pcm.length - 16_000 * 2));
    assert.ok(full.length > 16_000 * 0.5, `${full.length} samples in the last second`);
    assert.equal(dominantFrequency(full, 16_000, { minHz: 300, maxHz: 700, stepHz: 5, maxSeconds: 0.5 }), 440);
    const loud = rms(full);
    assert.ok(loud > 0.2, `rms ${loud}`);
    await page.evaluate(() => ((window as unknown as { el: HTMLAudioElement }).el.volume = 0.25));
    const mark = reader.bytes;
    await sleep(1_500);
    const quieter = rms(samples(reader.pcm(), mark + 16_000));
    assert.ok(Math.abs(quieter / loud - 0.25) < 0.05, `volume 0.25 → level ratio ${(quieter / loud).toFixed(3)}`);
  });

  test("a muted element is not heard, and the listener gets silence meanwhile, not nothing", async (t) => {
    const { page, tap } = await tapOn(t, WEBRTC_PAGE);
    const reader = await listen(t, tap, { sampleRate: 8000, channels: 1 });
    await untilHeard(reader, 8000);
    await page.evaluate(() => ((window as unknown as { el: HTMLAudioElement }).el.muted = true));
    await sleep(500);
    const mark = reader.bytes;
    await sleep(2_000);
    const muted = samples(reader.pcm(), mark);
    assert.ok(muted.length > 8000 * 1.5, `${muted.length} samples in 2 s while muted`);
    assert.ok(rms(muted) < 0.001, `rms ${rms(muted)} while muted`);
    await page.evaluate(() => ((window as unknown as { el: HTMLAudioElement }).el.muted = false));
    await sleep(500);
    const back = reader.bytes;
    await sleep(1_000);
    assert.ok(rms(samples(reader.pcm(), back)) > 0.2, "heard again once unmuted");
  });

  test("Web Audio played to a context's destination is heard (stereo listener)", async (t) => {
    const { tap } = await tapOn(t, WEB_AUDIO_PAGE);
    const reader = await listen(t, tap, { sampleRate: 48_000, channels: 2 });
    await untilHeard(reader, 48_000, 2);
    await sleep(1_000);
    const pcm = reader.pcm();
    // The last second: the source starts a little after the listener (silence until then).
    const stereo = samples(pcm, Math.max(0, pcm.length - 48_000 * 4));
    const left = stereo.filter((_, i) => i % 2 === 0);
    assert.ok(left.length > 48_000 * 0.5, `${left.length} frames`);
    assert.equal(dominantFrequency(left, 48_000, { minHz: 500, maxHz: 800, stepHz: 5, maxSeconds: 0.5 }), 660);
    assert.ok(Math.abs(rms(left) - 0.5 / Math.SQRT2) < 0.05, `rms ${rms(left)}`);
  });

  test("a frame that plays audio makes the tap give way to the sink's", async (t) => {
    const { tap, uncapturable } = await tapOn(t, FRAME_PAGE);
    await gaveWay(t, tap, uncapturable);
  });

  test("so does a frame of another site (its own renderer, out of the CDP binding's reach)", async (t) => {
    // 127.0.0.1 and localhost are different sites: the frame runs in a renderer of its own.
    let port = 0;
    const server = createHttpServer((req, res) => {
      res.setHeader("content-type", "text/html");
      res.end(req.url === "/frame" ? WEBRTC_PAGE : `<body><iframe src="http://localhost:${port}/frame"></iframe></body>`);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    t.after(() => server.closeAllConnections());
    t.after(() => server.close());
    port = (server.address() as AddressInfo).port;
    const { page, tap, uncapturable } = await tapOn(t, `http://127.0.0.1:${port}/`);
    const frame = page.frames().find((f) => f.url().startsWith("http://localhost"));
    assert.ok(frame, "the frame loaded");
    await frame.evaluate(() => (window as unknown as { ready?: Promise<unknown> }).ready);
    await gaveWay(t, tap, uncapturable);
  });

  /** A page served as the worker wires its taps (worker/listen/index.ts): the page tap first, the sink's when it gives up. */
  const viaTaps = async (t: TestContext, html: string) => {
    const page = await browser.page.context().newPage();
    t.after(() => page.close());
    const taps = new AudioTaps({ pulseEnv: pulse.env, source: pulse.recMonitor, fragmentMs: 40, logger, onFailure: (m) => assert.fail(m) });
    t.after(() => taps.stop());
    const uncapturable: string[] = [];
    const tap = new PageTap({ page, logger, onUncapturable: (why) => (uncapturable.push(why), taps.fallBackToSink()), onActive: (a) => taps.pageTapActive(a) });
    await tap.bind();
    taps.usePageTap(tap);
    await page.goto(`data:text/html,${encodeURIComponent(html)}`);
    await page.evaluate(() => (window as unknown as { ready?: Promise<unknown> }).ready);
    const { tapEnd, reader } = await socketPair(t, dir);
    taps.open({ sampleRate: 16_000, channels: 1 }, tapEnd);
    return { page, tap, reader, uncapturable };
  };

  test("audio its hooks do not see is heard all the same: the check against the sink moves the listener there", async (t) => {
    const { tap, reader, uncapturable } = await viaTaps(t, HIDDEN_PAGE);
    await untilHeard(reader, 16_000);
    assert.deepEqual(uncapturable, [MISSED_AUDIO], "the page tap gave up (it served first: it cannot know what it misses)");
    await sleep(1_000);
    const pcm = reader.pcm();
    const last = samples(pcm, Math.max(0, pcm.length - 16_000 * 2));
    assert.equal(dominantFrequency(last, 16_000, { minHz: 300, maxHz: 700, stepHz: 5, maxSeconds: 0.5 }), 440);
    const { tapEnd: another } = await socketPair(t, dir);
    assert.equal(tap.open({ sampleRate: 8000, channels: 1 }, another), false, "later listeners go to the sink at once");
  });

  test("an element autoplaying in a shadow root made by script is heard by the page tap itself", async (t) => {
    const { reader, uncapturable } = await viaTaps(t, SCRIPTED_SHADOW_PAGE);
    await untilHeard(reader, 16_000);
    assert.deepEqual(uncapturable, [], "no fallback: the page tap heard it");
    const pcm = reader.pcm();
    assert.equal(dominantFrequency(samples(pcm, Math.max(0, pcm.length - 16_000)), 16_000, { minHz: 300, maxHz: 700, stepHz: 5, maxSeconds: 0.5 }), 440);
  });

  test("the check leaves a page tap that hears the page alone, through sound and silence", async (t) => {
    const { page, reader, uncapturable } = await viaTaps(t, WEBRTC_PAGE);
    await untilHeard(reader, 16_000);
    await sleep(6_000);
    // Muted: the page and the sink are silent together.
    await page.evaluate(() => ((window as unknown as { el: HTMLAudioElement }).el.muted = true));
    await sleep(6_000);
    assert.deepEqual(uncapturable, [], "still the page tap");
  });

  const gaveWay = async (t: TestContext, tap: PageTap, uncapturable: string[]): Promise<void> => {
    const deadline = Date.now() + 10_000;
    while (uncapturable.length === 0 && Date.now() < deadline) await sleep(100);
    assert.equal(uncapturable.length, 1, "reported once");
    assert.match(uncapturable[0] ?? "", /frame/);
    assert.equal(tap.uncapturable, uncapturable[0]);
    const { tapEnd } = await socketPair(t, dir);
    assert.equal(tap.open({ sampleRate: 16_000, channels: 1 }, tapEnd), false, "no longer serves");
  };
});
