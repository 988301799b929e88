import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";
import { dominantFrequency, findGaps, rmsWindows, toneSpans, zeroRuns } from "../helpers/audio/analysis.ts";
import { channel, decodeToWav, readWav } from "../helpers/audio/wav.ts";
import { cleanupStack } from "../helpers/audio/cleanup.ts";

const execFileAsync = promisify(execFile);

/** 1 s of 440 Hz, 0.3 s silence, 1 s of 660 Hz, stereo 48 kHz, made by sox (not by our code). */
async function fixture(dir: string, ext: "wav" | "flac"): Promise<string> {
  const path = join(dir, `fixture.${ext}`);
  await execFileAsync("sox", [
    // -D: no dither, so the silence is exact zeros (zeroRuns below).
    "-D", "-n", "-r", "48000", "-c", "2", "-b", "16", path,
    "synth", "1", "sine", "440", "vol", "0.5", ":",
    "synth", "0.3", "sine", "440", "vol", "0", ":",
    "synth", "1", "sine", "660", "vol", "0.5",
  ]);
  return path;
}

test("readWav, toneSpans, findGaps and dominantFrequency on a known signal", async (t) => {
  const defer = cleanupStack(t);
  const dir = await mkdtemp(join(tmpdir(), "media-helpers-"));
  defer(() => rm(dir, { recursive: true, force: true }));
  const wav = await readWav(await fixture(dir, "wav"));
  assert.equal(wav.sampleRate, 48000);
  assert.equal(wav.channels, 2);
  assert.ok(Math.abs(wav.durationSec - 2.3) < 0.01, `${wav.durationSec}`);
  const left = channel(wav, 0);

  assert.equal(dominantFrequency(left, 48000, { maxSeconds: 1 }), 440);
  assert.equal(dominantFrequency(left, 48000, { startSec: 1.3, maxSeconds: 1 }), 660);
  const a = toneSpans(left, 48000, 440);
  const b = toneSpans(left, 48000, 660);
  assert.equal(a.length, 1);
  assert.equal(b.length, 1);
  assert.ok(Math.abs((a[0]?.endSec ?? 0) - 1) <= 0.06);
  assert.ok(Math.abs((b[0]?.startSec ?? 0) - 1.3) <= 0.06);
  const gaps = findGaps(left, 48000, { windowMs: 10, thresholdDb: -40, minGapMs: 100 });
  assert.equal(gaps.length, 1);
  assert.ok(Math.abs((gaps[0]?.startSec ?? 0) - 1) <= 0.02 && Math.abs((gaps[0]?.endSec ?? 0) - 1.3) <= 0.02);
  assert.equal(rmsWindows(left, 48000, 100).length, 23);
  // The 0.3 s of vol 0 are exact zeros; a sine's zero crossings never last a millisecond.
  const zeros = zeroRuns(left, 48000);
  assert.equal(zeros.length, 1);
  assert.ok(Math.abs((zeros[0]?.startSec ?? 0) - 1) <= 0.001 && Math.abs((zeros[0]?.endSec ?? 0) - 1.3) <= 0.001, JSON.stringify(zeros));
  // Lead-in and tail are not runs between sounds.
  assert.deepEqual(zeroRuns(new Float32Array([0, 0, 0, 0.5, 0, 0, 0, 0.5, 0, 0]), 1000, { minMs: 2 }), [{ startSec: 0.004, endSec: 0.007 }]);
});

test("readWav reads a WAV whose sizes are 0xFFFFFFFF and that ends in a partial frame", async (t) => {
  const defer = cleanupStack(t);
  const dir = await mkdtemp(join(tmpdir(), "media-helpers-"));
  defer(() => rm(dir, { recursive: true, force: true }));
  const good = await readFile(await fixture(dir, "wav"));
  const broken = Buffer.concat([good, Buffer.from([1, 2, 3])]);
  broken.writeUInt32LE(0xffffffff, 4);
  const data = broken.indexOf("data");
  broken.writeUInt32LE(0xffffffff, data + 4);
  const path = join(dir, "killed.wav");
  await writeFile(path, broken);
  const wav = await readWav(path);
  assert.equal(wav.frames, 110_400);
});

test("decodeToWav turns a FLAC into a readable WAV", async (t) => {
  const defer = cleanupStack(t);
  const dir = await mkdtemp(join(tmpdir(), "media-helpers-"));
  defer(() => rm(dir, { recursive: true, force: true }));
  const wav = await readWav(await decodeToWav(await fixture(dir, "flac")));
  assert.equal(wav.frames, 110_400);
  assert.equal(dominantFrequency(channel(wav, 1), 48000, { maxSeconds: 1 }), 440);
});
