import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { mkdtemp, readFile, rm, stat, writeFile, copyFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import {
  probeDuration,
  readFlacStreamInfo,
  repairRecording,
  repairWav,
  UnrepairableRecordingError,
} from "../../shared/recording/index.ts";

const RECORD_SECONDS = 2.5;
const BLOCK_ALIGN = 4; // 16-bit stereo

async function tempDir(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "repair-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * Records a 440 Hz tone in real time the way the worker records (with -flush_packets 1) and
 * SIGKILLs ffmpeg. Returns the seconds between the first bytes on disk and the kill.
 */
async function recordAndKill(t: TestContext, out: string, codec: string): Promise<number> {
  const child = spawn(
    "ffmpeg",
    ["-nostdin", "-v", "error", "-re", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
      "-ac", "2", "-ar", "48000", "-c:a", codec, "-flush_packets", "1", "-y", out],
    { detached: true, stdio: "ignore" },
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) process.kill(-(child.pid ?? 0), "SIGKILL");
    await exited;
  });
  // Time from the first flushed bytes, so ffmpeg's start-up on a busy machine is not counted.
  for (;;) {
    const size = await stat(out).then((s) => s.size, () => 0);
    if (size > 200) break;
    await sleep(10);
  }
  const started = performance.now();
  await sleep(RECORD_SECONDS * 1000);
  process.kill(-(child.pid ?? 0), "SIGKILL");
  const ran = (performance.now() - started) / 1000;
  await exited;
  return ran;
}

/** Decodes to mono s16le; fails the test if ffmpeg reports any decode error. */
async function decodeClean(path: string): Promise<Int16Array> {
  const run = await promisify(execFile)("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-ac", "1", "-f", "s16le", "-"], {
    encoding: "buffer",
    maxBuffer: 1 << 30,
  });
  assert.equal(run.stderr.toString(), "", "ffmpeg decode errors");
  const pcm = run.stdout;
  return new Int16Array(pcm.buffer, pcm.byteOffset, Math.floor(pcm.length / 2));
}

/** Goertzel power of one frequency over the samples. */
function goertzel(samples: Int16Array, frequency: number, rate: number): number {
  const coeff = 2 * Math.cos((2 * Math.PI * frequency) / rate);
  let s1 = 0;
  let s2 = 0;
  for (const sample of samples) {
    const s0 = sample / 32768 + coeff * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  return s1 * s1 + s2 * s2 - coeff * s1 * s2;
}

function assertTone(samples: Int16Array): void {
  const window = samples.subarray(0, 48000);
  assert.ok(window.length > 24000, "at least half a second of audio");
  const tone = goertzel(window, 440, 48000);
  const off = goertzel(window, 1000, 48000);
  assert.ok(tone > 1000 * off, `440 Hz dominates (tone ${tone}, 1 kHz ${off})`);
}

test("a SIGKILLed WAV is repaired to whole frames with the tone intact", async (t) => {
  const dir = await tempDir(t);
  const wav = join(dir, "out.wav");
  const ran = await recordAndKill(t, wav, "pcm_s16le");
  const head = await readFile(wav);
  assert.equal(head.readUInt32LE(4), 0xffffffff, "ffmpeg left the RIFF size unset");

  const result = await repairRecording(wav, "wav");
  assert.equal(result.repaired, true);
  assert.equal(result.sampleRate, 48000);
  assert.equal(result.channels, 2);
  assert.ok(Math.abs(result.durationSec - ran) < 0.5, `duration ${result.durationSec} vs ran ${ran}`);
  const { size } = await stat(wav);
  assert.equal(size, result.bytes);
  const bytes = await readFile(wav);
  const dataOffset = bytes.indexOf("data") + 8;
  assert.equal((size - dataOffset) % BLOCK_ALIGN, 0);
  assert.equal(bytes.readUInt32LE(dataOffset - 4), size - dataOffset);
  assert.equal(bytes.readUInt32LE(4), size - 8);
  const probed = await probeDuration(wav);
  assert.ok(probed !== null && Math.abs(probed - result.durationSec) < 0.01, `ffprobe ${probed}`);
  assertTone(await decodeClean(wav));

  // Repairing a complete file changes nothing.
  const again = await repairWav(wav);
  assert.equal(again.repaired, false);
  assert.equal(again.frames, result.frames);

  // Cut mid-sample with sizes unset again: trimmed back to whole frames.
  const cut = join(dir, "cut.wav");
  const partial = Buffer.from(bytes.subarray(0, dataOffset + 48000 * BLOCK_ALIGN + 3));
  partial.writeUInt32LE(0xffffffff, 4);
  partial.writeUInt32LE(0xffffffff, dataOffset - 4);
  await writeFile(cut, partial);
  const trimmed = await repairWav(cut);
  assert.equal(trimmed.frames, 48000);
  assert.equal(trimmed.durationSec, 1);
  assert.equal((await stat(cut)).size, dataOffset + 48000 * BLOCK_ALIGN);
  assertTone(await decodeClean(cut));

  // ffmpeg died before the data chunk header: nothing to repair.
  const stub = join(dir, "stub.wav");
  await writeFile(stub, bytes.subarray(0, 20));
  await assert.rejects(repairWav(stub), UnrepairableRecordingError);
});

test("a SIGKILLed FLAC is re-encoded so STREAMINFO holds the samples", async (t) => {
  const dir = await tempDir(t);
  const flac = join(dir, "out.flac");
  const ran = await recordAndKill(t, flac, "flac");
  const killedCopy = join(dir, "killed.flac");
  await copyFile(flac, killedCopy);
  assert.equal((await readFlacStreamInfo(flac)).totalSamples, 0, "ffmpeg left STREAMINFO empty");

  const result = await repairRecording(flac, "flac");
  assert.equal(result.repaired, true);
  assert.equal(result.sampleRate, 48000);
  assert.equal(result.channels, 2);
  assert.ok(Math.abs(result.durationSec - ran) < 0.5, `duration ${result.durationSec} vs ran ${ran}`);
  assert.equal((await stat(flac)).size, result.bytes);
  const probed = await probeDuration(flac);
  assert.ok(probed !== null && Math.abs(probed - result.durationSec) < 0.05, `ffprobe ${probed}`);
  assertTone(await decodeClean(flac));
  assert.equal((await repairRecording(flac, "flac")).repaired, false);

  // Cut at an arbitrary byte in the middle of a frame: what is decodable survives.
  const killed = await readFile(killedCopy);
  const cut = join(dir, "cut.flac");
  await writeFile(cut, killed.subarray(0, Math.floor(killed.length * 0.6) + 7));
  const partial = await repairRecording(cut, "flac");
  assert.ok(partial.durationSec > 0.5 && partial.durationSec < result.durationSec, `cut ${partial.durationSec}`);
  assertTone(await decodeClean(cut));

  const stub = join(dir, "stub.flac");
  await writeFile(stub, killed.subarray(0, 100));
  await assert.rejects(repairRecording(stub, "flac"), UnrepairableRecordingError);
});
