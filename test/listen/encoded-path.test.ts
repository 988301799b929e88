/**
 * The page tap's encoded path in a real browser (worker/listen/page-tap/encoded-script.ts and
 * encoded-receiver.ts): a WebRTC track a page plays reaches a listener from its Opus frames,
 * decoded in the worker, every one of them (none stood in for), at the element's volume and silent
 * while it is muted, with no track read in the page (so nothing paces the sink), its messages sent
 * by a SharedWorker whose WebSocket DevTools does not report to Playwright (a page that cannot
 * make one, an opaque origin, sends them from the Worker's own). Where the page refuses the path
 * (a CSP that refuses blob workers, or the loopback WebSocket) its receivers get no transform, the
 * page plays as it would without the tap, and the listener hears the track read in the page instead.
 */
import assert from "node:assert/strict";
import { createServer as createHttpServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { after, before, describe, test, type TestContext } from "node:test";
import { createLogger } from "../../shared/log/logger.ts";
import { startPulse, type PulseDaemon } from "../../worker/audio/pulse.ts";
import { launchBrowser, type BrowserHandle } from "../../worker/browser/launch.ts";
import { EncodedReceiver } from "../../worker/listen/page-tap/encoded-receiver.ts";
import { PageTap, installPageTap } from "../../worker/listen/page-tap/tap.ts";
import { dominantFrequency } from "../helpers/audio/analysis.ts";
import { webrtcTonePage } from "../helpers/audio/webrtc-tone-page.ts";
import { holdMediaLock } from "../harness/media-lock.ts";
import { socketPair, type Reader } from "./tap-socket.ts";

// Real Chromium and PulseAudio: one such file at a time (see media-lock.ts).
await holdMediaLock();

const logger = createLogger({ level: process.env.LOG_LEVEL ?? "silent" });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const RATE = 16_000;

/** The tone's call starts after the page loaded, as a meeting's does after the join. */
const PAGE = webrtcTonePage(440, 1_000);
/** The same, its receiving side making the offer with a transceiver of its own, as a client to its media server. */
const OFFERING_PAGE = webrtcTonePage(440, 1_000, { receiverOffers: true });

const samples = (pcm: Buffer, from: number): Float32Array => {
  const out = new Float32Array(Math.floor((pcm.length - from) / 2));
  for (let i = 0; i < out.length; i++) out[i] = pcm.readInt16LE(from + i * 2) / 32768;
  return out;
};
const rms = (xs: Float32Array) => Math.sqrt(xs.reduce((a, v) => a + v * v, 0) / Math.max(1, xs.length));

describe("page tap, encoded path (real Chromium and PulseAudio)", { timeout: 180_000 }, () => {
  let browser: BrowserHandle;
  let pulse: PulseDaemon;
  let receiver: EncodedReceiver;
  let dir: string;
  let server: Server;
  let base = "";

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "encoded-path-"));
    pulse = await startPulse({ dir, logger, mic: false });
    browser = await launchBrowser({ dir, pulseEnv: pulse.env, logger, mic: false });
    receiver = await EncodedReceiver.start(logger);
    await installPageTap(browser.page.context(), receiver.url);
    // The page over HTTP, with the CSP a test asks for (`?csp=`).
    server = createHttpServer((req, res) => {
      const csp = new URL(req.url ?? "/", "http://x").searchParams.get("csp");
      res.setHeader("content-type", "text/html");
      if (csp) res.setHeader("content-security-policy", csp);
      res.end(new URL(req.url ?? "/", "http://x").searchParams.has("offer") ? OFFERING_PAGE : PAGE);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  after(async () => {
    server?.closeAllConnections();
    server?.close();
    await browser?.close();
    await receiver?.close();
    await pulse?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  /**
   * The page (with `csp`, or the query `query`), a tap on it and a 16 kHz listener; `reading`
   * lists what the page said of its reading of tracks, `gaveWay` why the tap gave way to the
   * sink's. `readTracks` false: as with a microphone.
   */
  const listenTo = async (t: TestContext, csp?: string, readTracks = true, query = "") => {
    const page = await browser.page.context().newPage();
    t.after(() => page.close());
    const reading: boolean[] = [];
    const gaveWay: string[] = [];
    // The messages DevTools reports to Playwright as sent on a WebSocket (by the URL).
    const sent: string[] = [];
    page.on("websocket", (ws) => ws.on("framesent", () => sent.push(ws.url())));
    const tap = new PageTap({ page, logger, encoded: receiver, readTracks, onUncapturable: (why) => gaveWay.push(why), onReading: (r) => reading.push(r) });
    await tap.bind();
    // The tap is shared with the describe's receiver: stopping it would close the receiver.
    t.after(() => tap.takeOutputs());
    await page.goto(csp ? `${base}?csp=${encodeURIComponent(csp)}` : `${base}?${query}`);
    await page.evaluate(() => (window as unknown as { ready: Promise<unknown> }).ready);
    const { tapEnd, reader } = await socketPair(t, dir);
    assert.ok(tap.open({ sampleRate: RATE, channels: 1 }, tapEnd), "the page tap serves");
    return { page, reader, reading, gaveWay, sent };
  };

  /** The tone at the listener, from at least 50 frames decoded since `framesBefore`, no track read in the end. */
  const heardFromFrames = async (reader: Reader, framesBefore: number, reading: boolean[]) => {
    await untilHeard(reader);
    await byFrames(() => receiver.frames - framesBefore);
    const last = samples(reader.pcm(), Math.max(0, reader.bytes - RATE * 2));
    assert.equal(dominantFrequency(last, RATE, { minHz: 300, maxHz: 700, stepHz: 5, maxSeconds: 0.5 }), 440);
    assert.ok(receiver.frames - framesBefore >= 50, `${receiver.frames - framesBefore} frames decoded`);
    assert.equal(reading.at(-1) ?? false, false, `the page reads no track: ${JSON.stringify(reading)}`);
  };

  test("a receiver the page added itself before its offer (as a client to its media server) is heard from its frames too", async (t) => {
    const framesBefore = receiver.frames;
    const { reader, reading } = await listenTo(t, undefined, true, "offer=1");
    await heardFromFrames(reader, framesBefore, reading);
  });

  test("a call's frames all reach the listener: none is stood in for over 6 s (a sender's padding every 5 s is no loss)", async (t) => {
    const framesBefore = receiver.frames;
    const { reader } = await listenTo(t);
    await untilHeard(reader);
    await byFrames(() => receiver.frames - framesBefore);
    const [frames, stoodIn] = [receiver.frames, receiver.stoodIn];
    await sleep(6_000);
    assert.ok(receiver.frames - frames >= 250, `${receiver.frames - frames} frames decoded`);
    assert.equal(receiver.stoodIn - stoodIn, 0, "frames stood in for on a loopback call");
  });

  test("a WebRTC track reaches the listener from its frames, at the element's volume, and no track is read", async (t) => {
    const framesBefore = receiver.frames;
    const { page, reader, reading, sent } = await listenTo(t);
    await untilHeard(reader);
    await byFrames(() => receiver.frames - framesBefore);
    const last = samples(reader.pcm(), Math.max(0, reader.bytes - RATE * 2));
    assert.equal(dominantFrequency(last, RATE, { minHz: 300, maxHz: 700, stepHz: 5, maxSeconds: 0.5 }), 440);
    const loud = rms(last);
    assert.ok(loud > 0.2, `rms ${loud}`);
    assert.ok(receiver.frames - framesBefore >= 50, `${receiver.frames - framesBefore} frames decoded`);
    // A listener who comes before the receiver's first frame said its codec hears the track read
    // until then (at most once): then no track is read.
    assert.equal(reading.at(-1) ?? false, false, `the page reads no track: ${JSON.stringify(reading)}`);
    assert.ok(reading.filter((r) => r).length <= 1, JSON.stringify(reading));

    await page.evaluate(() => ((window as unknown as { el: HTMLAudioElement }).el.volume = 0.25));
    let mark = reader.bytes;
    await sleep(1_500);
    const quieter = rms(samples(reader.pcm(), mark + RATE));
    assert.ok(Math.abs(quieter / loud - 0.25) < 0.05, `volume 0.25 → level ratio ${(quieter / loud).toFixed(3)}`);

    await page.evaluate(() => ((window as unknown as { el: HTMLAudioElement }).el.muted = true));
    await sleep(500);
    mark = reader.bytes;
    await sleep(2_000);
    const muted = samples(reader.pcm(), mark);
    assert.ok(muted.length > RATE * 1.5, `${muted.length} samples in 2 s while muted: silence, not nothing`);
    assert.ok(rms(muted) < 0.001, `rms ${rms(muted)} while muted`);
    // The frames went by the carrier (a SharedWorker), whose WebSocket DevTools does not report.
    assert.equal(sent.filter((url) => url === receiver.url).length, 0, "the tap's messages were reported to Playwright");
  });

  test("a page that cannot make a SharedWorker (an opaque origin) sends the frames from its Worker's own WebSocket", async (t) => {
    const framesBefore = receiver.frames;
    const { page, reader, reading, sent } = await listenTo(t, "sandbox allow-scripts");
    assert.equal(await page.evaluate(() => typeof SharedWorker === "function" && window.origin), "null", "the page's origin is opaque");
    await heardFromFrames(reader, framesBefore, reading);
    const reported = sent.filter((url) => url === receiver.url).length;
    assert.ok(reported >= 25, `${reported} of the Worker's messages reported: its own WebSocket`);
  });

  for (const [what, csp] of [
    ["blob workers", "worker-src 'none'"],
    ["the loopback WebSocket", "connect-src 'self'"],
  ] as const) {
    test(`a page whose CSP refuses ${what} plays as before, and the listener hears its track read in the page`, async (t) => {
      const framesBefore = receiver.frames;
      const { reader, reading } = await listenTo(t, csp);
      await untilHeard(reader);
      await sleep(1_000);
      const last = samples(reader.pcm(), Math.max(0, reader.bytes - RATE * 2));
      assert.equal(dominantFrequency(last, RATE, { minHz: 300, maxHz: 700, stepHz: 5, maxSeconds: 0.5 }), 440);
      assert.ok(rms(last) > 0.2, `rms ${rms(last)}`);
      assert.equal(receiver.frames, framesBefore, "no frame came by the encoded path");
      assert.ok(reading.includes(true), "the page read the track");
    });
  }

  test("with a microphone the page tap serves the encoded path only: a page that refuses it sends the listener to the sink", async (t) => {
    const heard = await listenTo(t, undefined, false);
    await untilHeard(heard.reader);
    assert.deepEqual([heard.gaveWay, heard.reading.includes(true)], [[], false], "the encoded path serves");
    const refused = await listenTo(t, "worker-src 'none'", false);
    const deadline = Date.now() + 10_000;
    while (refused.gaveWay.length === 0) {
      assert.ok(Date.now() < deadline, "the tap did not give way");
      await sleep(100);
    }
    assert.match(refused.gaveWay[0]!, /encoded path/);
    assert.ok(!refused.reading.includes(true), "no track was read");
  });
});

/** Waits (up to 15 s) until the last quarter second the listener received is loud. */
async function untilHeard(reader: Reader): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const pcm = reader.pcm();
    if (rms(samples(pcm, Math.max(0, pcm.length - (RATE / 4) * 2))) > 0.2) return;
    assert.ok(Date.now() < deadline, `no tone within 15 s (${reader.bytes} bytes received)`);
    await sleep(100);
  }
}

/**
 * Waits (up to 15 s) until `decoded()` says 50 frames came by the encoded path, then 1 s more: on
 * a loaded machine the path may open after the listener has begun to hear the track read.
 */
async function byFrames(decoded: () => number): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (decoded() < 50 && Date.now() < deadline) await sleep(100);
  await sleep(1_000);
}
