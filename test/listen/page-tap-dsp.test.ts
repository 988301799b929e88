/**
 * The page tap's signal path (worker/listen/page-tap): the resampler converts a tone to another
 * rate at its frequency and level, rejects what the lower rate cannot carry, and gives the same
 * samples whatever the chunking; the mixer sums sources at their gains on one timeline, goes out
 * with one source as it comes, and a stalled source stops holding the others back.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { STALL_MS, TapMixer } from "../../worker/listen/page-tap/mixer.ts";
import { Resampler } from "../../worker/listen/page-tap/resampler.ts";
import { dominantFrequency, goertzelPower } from "../helpers/audio/analysis.ts";

const tone = (hz: number, rate: number, seconds: number, amplitude = 0.5, channels = 1): Float32Array => {
  const n = Math.round(rate * seconds);
  const out = new Float32Array(n * channels);
  for (let i = 0; i < n; i++) for (let c = 0; c < channels; c++) out[i * channels + c] = amplitude * Math.sin((2 * Math.PI * hz * i) / rate);
  return out;
};
/** A TapMixer on a clock the test moves. */
class MixerForTest {
  now = 0;
  readonly mixer = new TapMixer(1, () => this.now);

  advance(ms: number): void {
    this.now += ms;
  }
}
const rms = (xs: Float32Array, from = 0) => Math.sqrt(xs.subarray(from).reduce((a, v) => a + v * v, 0) / (xs.length - from));
const concat = (parts: Float32Array[]) => {
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

describe("page tap resampler", () => {
  for (const [inRate, outRate] of [
    [48_000, 16_000],
    [48_000, 8000],
    [48_000, 24_000],
    [8000, 16_000],
    [44_100, 16_000],
    [16_000, 48_000],
  ] as const) {
    test(`${inRate} → ${outRate}: a 440 Hz tone keeps its frequency, level and length`, () => {
      const r = new Resampler(inRate, outRate, 1);
      const out = r.push(tone(440, inRate, 2));
      // Length: the filter's delay (half of it) is all that is still inside.
      assert.ok(Math.abs(out.length - 2 * outRate) < outRate * 0.01, `${out.length} samples`);
      assert.equal(dominantFrequency(out, outRate, { minHz: 300, maxHz: 600, stepHz: 2, startSec: 0.2, maxSeconds: 1.5 }), 440);
      const level = rms(out, Math.floor(outRate * 0.2));
      assert.ok(Math.abs(level - 0.5 / Math.SQRT2) < 0.01, `rms ${level}`);
    });
  }

  test("what the lower rate cannot carry is filtered out, not folded down (48 → 16 kHz, 11 kHz tone)", () => {
    const out = new Resampler(48_000, 16_000, 1).push(tone(11_000, 48_000, 1));
    // Dropping samples would alias 11 kHz to 5 kHz at full level.
    const aliased = goertzelPower(out, 16_000, 5000, 1600);
    const reference = goertzelPower(tone(5000, 16_000, 1), 16_000, 5000, 1600);
    assert.ok(aliased < reference * 1e-6, `alias at ${(10 * Math.log10(aliased / reference)).toFixed(1)} dB`);
  });

  for (const [inRate, outRate, channels] of [[48_000, 16_000, 2], [8000, 48_000, 2], [8000, 16_000, 1], [48_000, 24_000, 1], [16_000, 8000, 3]] as const) {
    test(`chunks of any size give the same samples as one push (${inRate} → ${outRate}, ${channels} channel(s))`, () => {
      // Each channel its own level and frequency, so that channels mixed up would show.
      const input = tone(1000, inRate, 0.5, 0.4, channels);
      for (let i = 0; i < input.length; i++) input[i] = input[i]! * (1 - 0.3 * (i % channels)) + (i % channels) * 0.1 * Math.sin(i / 50);
      const whole = new Resampler(inRate, outRate, channels).push(input);
      for (let c = 0; c < channels; c++) {
        const alone = new Resampler(inRate, outRate, 1).push(input.filter((_, i) => i % channels === c));
        assert.equal(alone.length * channels, whole.length);
        for (let i = 0; i < alone.length; i++) assert.ok(Math.abs(alone[i]! - whole[i * channels + c]!) < 1e-5, `channel ${c} sample ${i}`);
      }
      const r = new Resampler(inRate, outRate, channels);
      const parts: Float32Array[] = [];
      const frames = input.length / channels;
      for (let at = 0, step = 1; at < frames; at += step, step = (step * 7) % 997 + 1) parts.push(r.push(input.subarray(at * channels, Math.min(input.length, (at + step) * channels))));
      const chunked = concat(parts);
      assert.ok(whole.length > 0);
      assert.equal(chunked.length, whole.length);
      for (let i = 0; i < whole.length; i++) assert.ok(Math.abs((chunked[i] ?? 0) - (whole[i] ?? 0)) < 1e-5, `sample ${i}`);
    });
  }
});

describe("page tap mixer", () => {
  test("one source goes out as it comes, at its gain, with its rate as the mix's", () => {
    const m = new MixerForTest();
    m.mixer.setGain("1", 0.5);
    const out = m.mixer.push("1", 48_000, 1, new Float32Array(480).fill(0.4));
    assert.equal(m.mixer.rate, 48_000);
    assert.equal(out.length, 480);
    assert.ok(out.every((v) => Math.abs(v - 0.2) < 1e-6));
  });

  test("two sources are summed on one timeline; the mix waits for the later one", () => {
    const m = new MixerForTest();
    assert.equal(m.mixer.push("a", 48_000, 1, new Float32Array(960).fill(0.1)).length, 960);
    // b joins at the present and is ahead of a: its audio waits until a has covered it.
    assert.equal(m.mixer.push("b", 48_000, 1, new Float32Array(480).fill(0.3)).length, 0);
    const out = m.mixer.push("a", 48_000, 1, new Float32Array(480).fill(0.1));
    assert.equal(out.length, 480);
    assert.ok(out.every((v) => Math.abs(v - 0.4) < 1e-6), `mixed ${out[0]}`);
  });

  test("stereo sources into a mono mix are averaged; a source at another rate is converted", () => {
    const m = new MixerForTest();
    m.mixer.push("a", 48_000, 1, new Float32Array(0));
    const stereo = new Float32Array(960);
    for (let i = 0; i < 480; i++) {
      stereo[i * 2] = 0.2;
      stereo[i * 2 + 1] = 0.6;
    }
    const out = m.mixer.push("a", 48_000, 2, stereo);
    assert.ok(out.every((v) => Math.abs(v - 0.4) < 1e-6));
    const other = new MixerForTest();
    other.mixer.push("x", 48_000, 1, new Float32Array(480));
    other.mixer.end("x");
    const converted = other.mixer.push("y", 16_000, 1, tone(440, 16_000, 1));
    assert.ok(Math.abs(converted.length - 48_000) < 480, `${converted.length}`);
  });

  test("a source silent for longer than STALL_MS stops holding the mix back, and rejoins at the present", () => {
    const m = new MixerForTest();
    assert.equal(m.mixer.push("a", 48_000, 1, new Float32Array(480).fill(0.1)).length, 480);
    assert.equal(m.mixer.push("b", 48_000, 1, new Float32Array(480).fill(0.3)).length, 0);
    assert.equal(m.mixer.push("b", 48_000, 1, new Float32Array(480).fill(0.3)).length, 0, "a holds the mix");
    m.advance(STALL_MS + 1);
    // a has gone quiet: b's audio goes out.
    const alone = m.mixer.push("b", 48_000, 1, new Float32Array(480).fill(0.3));
    assert.equal(alone.length, 1440);
    assert.ok(alone.every((v) => Math.abs(v - 0.3) < 1e-6));
    // a comes back at the present (never into what went out), and the two are mixed again.
    assert.equal(m.mixer.push("a", 48_000, 1, new Float32Array(480).fill(0.1)).length, 0);
    const both = m.mixer.push("b", 48_000, 1, new Float32Array(480).fill(0.3));
    assert.equal(both.length, 480);
    assert.ok(both.every((v) => Math.abs(v - 0.4) < 1e-6));
  });
});
