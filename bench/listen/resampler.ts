/**
 * `node --import tsx bench/listen/resampler.ts`: the page tap's resampler alone (worker/listen/
 * page-tap/resampler.ts), fed 20 ms pushes as the encoded path decodes them, for each conversion
 * a listener's format can ask of a G.711 (8 kHz) or Opus (48 kHz) source. Prints JSON: ms of CPU
 * per second of audio (= % of a core × 10), best of BENCH_REPEATS (3) runs of BENCH_SECONDS (100)
 * s of audio each. Asserts nothing.
 */
import { loadavg } from "node:os";
import { Resampler } from "../../worker/listen/page-tap/resampler.ts";

const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 100);
const CASES: Array<[number, number, 1 | 2]> = [
  [8000, 16_000, 1],
  [8000, 24_000, 1],
  [8000, 48_000, 2],
  [48_000, 8000, 1],
  [48_000, 16_000, 1],
  [48_000, 24_000, 1],
  [48_000, 16_000, 2],
];

const results: Record<string, number> = {};
for (const [inRate, outRate, channels] of CASES) {
  const push = new Float32Array((inRate / 50) * channels).map((_, i) => 0.5 * Math.sin(i / 10));
  let best = Infinity;
  for (let r = 0; r < REPEATS; r++) {
    const resampler = new Resampler(inRate, outRate, channels);
    for (let i = 0; i < 200; i++) resampler.push(push);
    const started = performance.now();
    for (let i = 0; i < SECONDS * 50; i++) resampler.push(push);
    best = Math.min(best, (performance.now() - started) / SECONDS);
  }
  results[`${inRate / 1000}k→${outRate / 1000}k ×${channels}`] = Math.round(best * 1000) / 1000;
}
console.log(JSON.stringify({ ms_cpu_per_second_of_audio: results, load: loadavg().map((l) => Math.round(l * 100) / 100) }, null, 2));
