/** Signal analysis for recordings: levels, tones and gaps, on float samples in [-1, 1). */

/** Power of one frequency in a block (Goertzel), normalised so a full-scale sine gives ~0.25. */
export function goertzelPower(samples: Float32Array, rate: number, freq: number, start = 0, end = samples.length): number {
  const n = end - start;
  if (n <= 0) return 0;
  const w = (2 * Math.PI * freq) / rate;
  const coeff = 2 * Math.cos(w);
  let s1 = 0;
  let s2 = 0;
  for (let i = start; i < end; i++) {
    const s0 = (samples[i] ?? 0) + coeff * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  const power = s1 * s1 + s2 * s2 - coeff * s1 * s2;
  return power / (n * n);
}

/**
 * The strongest frequency between minHz and maxHz, scanned with Goertzel in stepHz steps over
 * the first `maxSeconds` of samples (enough to identify a steady tone, cheap on a busy box).
 */
export function dominantFrequency(
  samples: Float32Array,
  rate: number,
  { minHz = 50, maxHz = 4000, stepHz = 5, maxSeconds = 2, startSec = 0 } = {},
): number {
  const start = Math.min(samples.length, Math.floor(startSec * rate));
  const end = Math.min(samples.length, start + Math.floor(maxSeconds * rate));
  let best = 0;
  let bestPower = -1;
  for (let f = minHz; f <= maxHz; f += stepHz) {
    const p = goertzelPower(samples, rate, f, start, end);
    if (p > bestPower) {
      bestPower = p;
      best = f;
    }
  }
  return best;
}

export function rms(samples: Float32Array, start = 0, end = samples.length): number {
  let sum = 0;
  for (let i = start; i < end; i++) sum += (samples[i] ?? 0) ** 2;
  return end > start ? Math.sqrt(sum / (end - start)) : 0;
}

export function toDb(level: number): number {
  return 20 * Math.log10(Math.max(level, 1e-10));
}

/** RMS of consecutive windows of windowMs. */
export function rmsWindows(samples: Float32Array, rate: number, windowMs: number): number[] {
  const size = Math.max(1, Math.round((rate * windowMs) / 1000));
  const out: number[] = [];
  for (let start = 0; start + size <= samples.length; start += size) out.push(rms(samples, start, start + size));
  return out;
}

export interface Span {
  startSec: number;
  endSec: number;
}

/**
 * Silent stretches inside a signal: runs of windows below thresholdDb lasting at least minGapMs,
 * ignoring the silence before the first and after the last loud window (lead-in / tail).
 */
export function findGaps(
  samples: Float32Array,
  rate: number,
  { windowMs = 10, thresholdDb = -40, minGapMs = 100 } = {},
): Span[] {
  const levels = rmsWindows(samples, rate, windowMs).map(toDb);
  const first = levels.findIndex((db) => db >= thresholdDb);
  const last = levels.findLastIndex((db) => db >= thresholdDb);
  if (first < 0) return [];
  const gaps: Span[] = [];
  let runStart = -1;
  for (let i = first; i <= last + 1; i++) {
    const quiet = i <= last && (levels[i] ?? 0) < thresholdDb;
    if (quiet && runStart < 0) runStart = i;
    if (!quiet && runStart >= 0) {
      if ((i - runStart) * windowMs >= minGapMs) {
        gaps.push({ startSec: (runStart * windowMs) / 1000, endSec: (i * windowMs) / 1000 });
      }
      runStart = -1;
    }
  }
  return gaps;
}

/**
 * Where a frequency is present: windows whose Goertzel level for freq is within
 * `relativeDb` of the window's total RMS and above `thresholdDb`, merged into spans.
 */
export function toneSpans(
  samples: Float32Array,
  rate: number,
  freq: number,
  { windowMs = 50, thresholdDb = -40, relativeDb = 6 } = {},
): Span[] {
  const size = Math.round((rate * windowMs) / 1000);
  const spans: Span[] = [];
  let open: Span | undefined;
  for (let start = 0; start + size <= samples.length; start += size) {
    // A sine of amplitude A has Goertzel power A²/4 and RMS A/√2: tone RMS = √(2·power).
    const toneRms = Math.sqrt(2 * goertzelPower(samples, rate, freq, start, start + size));
    const total = rms(samples, start, start + size);
    const present = toDb(toneRms) >= thresholdDb && toDb(toneRms) >= toDb(total) - relativeDb;
    const t = start / rate;
    if (present && !open) open = { startSec: t, endSec: t + windowMs / 1000 };
    else if (present && open) open.endSec = t + windowMs / 1000;
    else if (!present && open) {
      spans.push(open);
      open = undefined;
    }
  }
  if (open) spans.push(open);
  return spans;
}

/**
 * Digital silence between sounds: runs of at least `minMs` of exact zero samples, leaving out the
 * lead-in and the tail. It is what PulseAudio mixes where a stream under-ran (worker/audio/gaps.ts);
 * a tone, even through Opus, never holds a millisecond of exact zeros, so each run is a gap.
 */
export function zeroRuns(samples: Float32Array, rate: number, { minMs = 1 } = {}): Span[] {
  const minRun = Math.max(1, Math.round((rate * minMs) / 1000));
  const runs: Span[] = [];
  let sound = false;
  let runStart = -1;
  for (let i = 0; i < samples.length; i++) {
    if (samples[i] === 0) {
      if (runStart < 0) runStart = i;
      continue;
    }
    if (sound && runStart >= 0 && i - runStart >= minRun) runs.push({ startSec: runStart / rate, endSec: i / rate });
    sound = true;
    runStart = -1;
  }
  return runs;
}
