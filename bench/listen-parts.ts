/**
 * `make bench-listen-parts`: where the page tap's cost goes, part by part, in a real Chromium and
 * PulseAudio without a session around them (no control plane, no fixture): a page plays a tone
 * as Teams plays the meeting (a WebRTC track on an <audio>), a record stream with the recorder's
 * fragment stands for the recorder, and this process does the worker's part (CDP, mixing,
 * resampling) and reads the outputs (the control plane's reading). In turns, BENCH_ROUNDS times
 * (alternating, so that the machine's drift spreads over all), each over BENCH_CPU_SECONDS:
 *   recording  the recorder's stream only (what a session costs without listeners);
 *   paced      + the sink paced as while the page tap serves (worker/listen/sink-pacer.ts);
 *   read       + the page reading its tracks, nothing sent out of it (the binding a no-op);
 *   tap_1      the page tap serving one 16 kHz mono output;
 *   tap_4      serving four: 8k, 16k, 24k mono and 48k stereo.
 * % of one core by kind of process (Chromium's by --type, PulseAudio, `other`: the parecs) and
 * `this_process`; then the parts: pacing, reading, sending (tap_1 - read: CDP across the browser,
 * this process's decoding, mixing, resampling), and each format after the first. BENCH_PACE_MS
 * sets the pacer's block. Prints the `uptime` load too. Asserts nothing.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { connect, createServer, type Socket } from "node:net";
import { tmpdir, loadavg } from "node:os";
import { join } from "node:path";
import { createLogger } from "../shared/log/logger.ts";
import type { ListenFormat } from "../shared/listen/protocol.ts";
import { webrtcTonePage } from "../test/helpers/audio/webrtc-tone-page.ts";
import { holdMediaLock } from "../test/harness/media-lock.ts";
import { REC_MONITOR, startPulse } from "../worker/audio/pulse.ts";
import { RECORD_FRAGMENT_MS } from "../worker/audio/recorder.ts";
import { launchBrowser } from "../worker/browser/launch.ts";
import { parecArgs, parecEnv } from "../worker/audio/parec.ts";
import { PAGE_TAP_BINDING, PAGE_TAP_GLOBAL, pageTapSendMs } from "../worker/listen/page-tap/page-script.ts";
import { EncodedReceiver } from "../worker/listen/page-tap/encoded-receiver.ts";
import { PageTap, encodedPathEnabled, installPageTap } from "../worker/listen/page-tap/tap.ts";
import { paceMs, startSinkPacer, type SinkPacer } from "../worker/listen/sink-pacer.ts";
import { cpuByKind } from "./bot/measure.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const SECONDS = Number(process.env.BENCH_CPU_SECONDS ?? 15);
if (process.env.BENCH_PACE_MS) process.env.TOAMAISUTAA_LISTEN_PACE_MSEC = process.env.BENCH_PACE_MS;
if (process.env.BENCH_ENCODED_BATCH) process.env.TOAMAISUTAA_LISTEN_ENCODED_BATCH = process.env.BENCH_ENCODED_BATCH;
if (process.env.BENCH_SEND_MS) process.env.TOAMAISUTAA_LISTEN_SEND_MSEC = process.env.BENCH_SEND_MS;
if (process.env.BENCH_ENCODED) process.env.TOAMAISUTAA_LISTEN_ENCODED = process.env.BENCH_ENCODED;
const CHROMIUM_ARGS = (process.env.BENCH_CHROMIUM_ARGS ?? "").split(" ").filter(Boolean);
const MODES = ["recording", "paced", "read", "tap_1", "tap_4"] as const;
type Mode = (typeof MODES)[number];
const FORMATS: Record<Mode, ListenFormat[]> = {
  recording: [],
  paced: [],
  read: [],
  tap_1: [{ sampleRate: 16_000, channels: 1 }],
  tap_4: [
    { sampleRate: 8000, channels: 1 },
    { sampleRate: 16_000, channels: 1 },
    { sampleRate: 24_000, channels: 1 },
    { sampleRate: 48_000, channels: 2 },
  ],
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round1 = (x: number) => Math.round(x * 10) / 10;

await holdMediaLock();
const logger = createLogger({ level: process.env.LOG_LEVEL ?? "silent" });
const dir = await mkdtemp(join(tmpdir(), "bench-listen-parts-"));
const pulse = await startPulse({ dir, logger, mic: false });
const browser = await launchBrowser({ dir, pulseEnv: pulse.env, logger, mic: false, extraArgs: CHROMIUM_ARGS });
const recorder = spawn("parec", parecArgs({ pulseEnv: pulse.env, source: REC_MONITOR, format: { sampleRate: 48_000, channels: 2 }, fragmentMs: RECORD_FRAGMENT_MS, stream: "recorder" }), {
  env: { ...process.env, ...parecEnv(pulse.env) },
  stdio: "ignore",
  // A group of its own: the tree measured is the groups of the processes naming `dir`, not this one.
  detached: true,
});

/** A socket pair: the tap writes one end, this process reads the other (as the control plane does). */
async function socketPair(): Promise<[Socket, Socket]> {
  const path = join(dir, `out-${Math.random().toString(16).slice(2)}.sock`);
  const accepted = new Promise<Socket>((resolve) => {
    const server = createServer((s) => (server.close(), resolve(s))).listen(path);
  });
  const reader = connect(path).on("data", () => undefined);
  return [await accepted, reader];
}

const encoded = encodedPathEnabled() ? await EncodedReceiver.start(logger) : null;
try {
  await installPageTap(browser.context, encoded?.url ?? null);
  const page = browser.page;
  // The taps pace the sink only while the page reads tracks (not for the encoded path).
  let reading = false;
  const tap = new PageTap({ page, logger, encoded, onUncapturable: (why) => console.error(`uncapturable: ${why}`), onReading: (r) => (reading = r) });
  await tap.bind();
  await page.goto(`data:text/html,${encodeURIComponent(webrtcTonePage(440, 1_000))}`);
  await page.evaluate(() => (window as unknown as { ready: Promise<unknown> }).ready);

  const figures: Record<Mode, Record<string, number>[]> = { recording: [], paced: [], read: [], tap_1: [], tap_4: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of MODES) {
      let pacer: SinkPacer | null = null;
      const sockets: Socket[] = [];
      // `read`: the page's sends go nowhere, so nothing crosses the browser.
      await page.evaluate(([binding, mute]) => {
        const w = window as unknown as Record<string, unknown>;
        w.__benchSend ??= w[binding];
        w[binding] = mute ? () => undefined : w.__benchSend;
      }, [PAGE_TAP_BINDING, mode === "read"] as const);
      if (mode === "paced" || mode === "read") pacer = startSinkPacer({ pulseEnv: pulse.env, source: REC_MONITOR, logger });
      // `read` starts the page's reading itself: an output would have the tap fill in silence.
      if (mode === "read") await page.evaluate((g) => (window as unknown as Record<string, { start(ch: number): string }>)[g]?.start(1), PAGE_TAP_GLOBAL);
      for (const format of FORMATS[mode]) {
        const pair = await socketPair();
        sockets.push(...pair);
        if (!tap.open(format, pair[0])) throw new Error("the page tap did not serve");
      }
      await sleep(3_000);
      if (reading && !pacer) pacer = startSinkPacer({ pulseEnv: pulse.env, source: REC_MONITOR, logger });
      if (reading) await sleep(1_000);
      const mine = process.cpuUsage();
      const t0 = performance.now();
      const byKind = await cpuByKind(dir, SECONDS);
      const own = process.cpuUsage(mine);
      const seconds = (performance.now() - t0) / 1000;
      const row = Object.fromEntries([...byKind].map(([k, v]) => [k, round1(v)]));
      row.this_process = round1((own.user + own.system) / 1e4 / seconds);
      row.total = round1((byKind.get("all") ?? 0) + row.this_process);
      delete row.all;
      figures[mode].push(row);
      console.error(`${mode} (round ${round + 1}): ${JSON.stringify(row)}`);
      for (const s of sockets) s.destroy();
      await pacer?.stop();
      await page.evaluate((g) => (window as unknown as Record<string, { stop(): void }>)[g]?.stop(), PAGE_TAP_GLOBAL);
      await sleep(500);
    }
  }
  const mean = (m: Mode) => figures[m].reduce((a, r) => a + (r.total ?? 0), 0) / figures[m].length;
  console.log(JSON.stringify({
    cpu_percent_of_core: figures,
    parts_mean: {
      pacing: round1(mean("paced") - mean("recording")),
      reading_in_the_page: round1(mean("read") - mean("paced")),
      sending_mixing_resampling: round1(mean("tap_1") - mean("read")),
      first_listener: round1(mean("tap_1") - mean("recording")),
      each_further_format: round1((mean("tap_4") - mean("tap_1")) / 3),
    },
    pace_ms: paceMs(),
    send_ms: pageTapSendMs(),
    encoded_frames: encoded?.frames ?? null,
    chromium_args: CHROMIUM_ARGS,
    load: loadavg().map((l) => l.toFixed(2)).join(" "),
  }, null, 2));
} finally {
  recorder.kill();
  await encoded?.close();
  await browser.close();
  await pulse.stop();
  await rm(dir, { recursive: true, force: true });
}
