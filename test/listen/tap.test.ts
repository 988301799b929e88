/**
 * The listen tap (worker/listen/capture.ts) on a real PulseAudio daemon of the worker's own
 * configuration: a tone pair played into `rec` (1 kHz, and 6 kHz, which lies above an 8 kHz
 * listener's Nyquist) comes out of a tap at each listening format resampled by a real,
 * band-limited resampler: the 1 kHz tone at its level, the 6 kHz one kept at 16 kHz and above,
 * and at 8 kHz neither passed nor folded to 2 kHz (sample dropping would fold it at full level).
 * Each tap writes into a reader's unix socket, as into the control plane's: a reader that closes
 * ends its tap as "reader gone" (a listener left), never as a failure.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer, connect, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { test, type TestContext } from "node:test";
import { createLogger } from "../../shared/log/logger.ts";
import type { ListenFormat } from "../../shared/listen/protocol.ts";
import { TAP_MS, startCapture } from "../../worker/listen/capture.ts";
import { goertzelPower } from "../helpers/audio/analysis.ts";
import { daemonInTempDir } from "../helpers/audio/daemon-dir.ts";
import { channel, float, sleep, waitFor } from "./helpers.ts";

const logger = createLogger({ level: process.env.LOG_LEVEL ?? "warn" });
const RATE = 48_000;

/** 48 kHz stereo s16le: 1 kHz and 6 kHz sines, each at 0.25 of full scale, for `seconds`. */
function tonePair(seconds: number): Buffer {
  const out = Buffer.alloc(RATE * seconds * 4);
  for (let i = 0; i < RATE * seconds; i++) {
    const v = Math.round(8192 * (Math.sin((2 * Math.PI * 1000 * i) / RATE) + Math.sin((2 * Math.PI * 6000 * i) / RATE)));
    out.writeInt16LE(v, i * 4);
    out.writeInt16LE(v, i * 4 + 2);
  }
  return out;
}

/** A connected pair over a unix socket: the tap writes into `writer`, the test reads `reader`. */
async function socketPair(server: Server, path: string): Promise<{ reader: Socket; writer: Socket }> {
  const writer = new Promise<Socket>((resolve) => server.once("connection", resolve));
  const reader = connect(path);
  await new Promise((resolve) => reader.once("connect", resolve));
  return { reader, writer: await writer };
}

async function unixServer(path: string): Promise<Server> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return server;
}

/** Level of `hz` against the 1 kHz tone, in dB, over 1 s of the tap's audio after its first 0.5 s. */
function relativeDb(pcm: Buffer, format: ListenFormat, hz: number, ch = 0): number {
  const samples = float(channel(pcm, format.channels, ch)).subarray(format.sampleRate / 2, format.sampleRate * 1.5);
  const power = (f: number) => goertzelPower(samples, format.sampleRate, f);
  return 10 * Math.log10(power(hz) / power(1000));
}

/**
 * A worker's PulseAudio daemon playing the tone pair into `rec` for `seconds`, and a unix server
 * the taps write into (as into the control plane's), all gone after the test.
 */
async function tonesAndTapServer(t: TestContext, seconds: number) {
  const { dir, pulse, defer } = await daemonInTempDir(t, "listen-tap-", logger);
  const player = spawn("pacat", ["--raw", "--format=s16le", `--rate=${RATE}`, "--channels=2", "--latency-msec=100", "--device=rec"], { env: { ...process.env, ...pulse.env }, stdio: ["pipe", "ignore", "ignore"] });
  defer(() => player.kill("SIGKILL"));
  player.stdin.on("error", () => undefined);
  player.stdin.write(tonePair(seconds));
  const path = join(dir, "taps.sock");
  const server = await unixServer(path);
  defer(() => server.close());
  return { pulse, defer, pair: () => socketPair(server, path) };
}

test("a tap at each listening format resamples through a band-limited resampler", async (t) => {
  const { pulse, defer, pair } = await tonesAndTapServer(t, 12);
  await sleep(300);

  const formats: ListenFormat[] = [
    { sampleRate: 8000, channels: 1 },
    { sampleRate: 16000, channels: 1 },
    { sampleRate: 48000, channels: 2 },
  ];
  const got: { format: ListenFormat; chunks: Buffer[] }[] = [];
  for (const format of formats) {
    const chunks: Buffer[] = [];
    const { reader, writer } = await pair();
    defer(() => reader.destroy());
    reader.on("data", (c: Buffer) => chunks.push(c));
    const capture = startCapture({ pulseEnv: pulse.env, source: pulse.recMonitor, format, fragmentMs: TAP_MS.withMic, logger, output: writer });
    defer(() => capture.stop());
    got.push({ format, chunks });
  }
  // An idle null sink has rendered up to 2 s ahead: the taps' first audio comes when that ends.
  const bytesOf = (f: ListenFormat, seconds: number) => f.sampleRate * f.channels * 2 * seconds;
  await waitFor("1.5 s at every tap", () => got.every(({ format, chunks }) => chunks.reduce((n, c) => n + c.length, 0) >= bytesOf(format, 1.5)), 10_000);

  for (const { format, chunks } of got) {
    const label = `${format.sampleRate} Hz × ${format.channels}`;
    const pcm = Buffer.concat(chunks);
    for (let ch = 0; ch < format.channels; ch++) {
      const samples = float(channel(pcm, format.channels, ch)).subarray(format.sampleRate / 2, format.sampleRate * 1.5);
      const level = Math.sqrt(goertzelPower(samples, format.sampleRate, 1000));
      assert.ok(level > 0.05, `${label} ch${ch}: the 1 kHz tone is there (${level.toFixed(3)})`);
      if (format.sampleRate >= 16000) assert.ok(relativeDb(pcm, format, 6000, ch) > -3, `${label} ch${ch}: 6 kHz kept (${relativeDb(pcm, format, 6000, ch).toFixed(1)} dB)`);
    }
    if (format.sampleRate === 8000) {
      // 6 kHz folds to 2 kHz at 8 kHz; a band-limited resampler removes it first.
      const alias = relativeDb(pcm, format, 2000);
      assert.ok(alias < -60, `${label}: 6 kHz folded to 2 kHz at ${alias.toFixed(1)} dB (a real resampler stays under -60)`);
    }
  }
});

test("a tap whose reader closes ends as 'reader gone'; one stopped ends as expected", async (t) => {
  const { pulse, defer, pair } = await tonesAndTapServer(t, 6);
  const format: ListenFormat = { sampleRate: 16000, channels: 1 };

  const left = await pair();
  let bytes = 0;
  left.reader.on("data", (c: Buffer) => (bytes += c.length));
  const leaving = startCapture({ pulseEnv: pulse.env, source: pulse.recMonitor, format, fragmentMs: TAP_MS.withMic, logger, output: left.writer });
  defer(() => leaving.stop());
  assert.ok(left.writer.destroyed, "the worker's own handle is closed at once: parec holds the socket");
  await waitFor("audio through the socket", () => bytes > 0, 10_000);
  left.reader.destroy();
  const gone = await leaving.exited;
  assert.deepEqual({ expected: gone.expected, readerGone: gone.readerGone }, { expected: false, readerGone: true });

  const kept = await pair();
  const ended = new Promise((r) => kept.reader.once("close", r));
  kept.reader.resume();
  const stopped = startCapture({ pulseEnv: pulse.env, source: pulse.recMonitor, format, fragmentMs: TAP_MS.withMic, logger, output: kept.writer });
  await stopped.stop();
  const exit = await stopped.exited;
  assert.deepEqual({ expected: exit.expected, readerGone: exit.readerGone }, { expected: true, readerGone: false });
  await ended;
});
