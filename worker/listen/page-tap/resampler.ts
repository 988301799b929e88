/**
 * A rational sample-rate converter: polyphase FIR, Blackman-windowed sinc (stop band below
 * -70 dB), the cutoff just under the lower of the two Nyquist frequencies. For a page tap's audio
 * (48 kHz from WebRTC, any rate from a media element) to a listener's 8, 16, 24 or 48 kHz; the
 * same kind of filter PulseAudio's speex resampler is, not sample dropping. Streaming: state is
 * kept between pushes, so chunks of any size give the same output as one long push. Its delay is
 * half the filter: ZERO_CROSSINGS input samples at the lower rate's scale (1.5 ms at 48 → 8 kHz).
 */

/** Zero crossings of the sinc on each side: the filter's length and sharpness. */
const ZERO_CROSSINGS = 12;
/** The pass band's edge as a share of the lower Nyquist frequency (the rest is the transition). */
const ROLLOFF = 0.91;

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}

export class Resampler {
  readonly inRate: number;
  readonly outRate: number;
  readonly channels: number;
  /** Output step in input samples is up/down: `down` input samples per `up` output samples. */
  readonly #up: number;
  readonly #down: number;
  /** Taps per phase, and the phases' coefficients (phase-major). */
  readonly #taps: number;
  readonly #table: Float32Array;
  /**
   * Input not yet consumed (`#historyFrames` frames, interleaved, from `#taps - 1` before the next
   * output's window) at the start; the next push's input is copied in after it.
   */
  #work: Float32Array;
  #historyFrames: number;
  /** The next output's position, in 1/up input samples, from the start of `#work`. */
  #phase = 0;

  constructor(inRate: number, outRate: number, channels: number) {
    if (!(inRate > 0 && outRate > 0 && Number.isInteger(inRate) && Number.isInteger(outRate))) throw new Error(`bad rates ${inRate} → ${outRate}`);
    this.inRate = inRate;
    this.outRate = outRate;
    this.channels = channels;
    const g = gcd(inRate, outRate);
    this.#up = outRate / g;
    this.#down = inRate / g;
    // Cutoff in cycles per input sample.
    const cutoff = (0.5 * ROLLOFF * Math.min(inRate, outRate)) / inRate;
    const half = Math.ceil(ZERO_CROSSINGS / (2 * cutoff));
    this.#taps = 2 * half;
    this.#table = new Float32Array(this.#up * this.#taps);
    for (let p = 0; p < this.#up; p++) {
      const frac = p / this.#up;
      let sum = 0;
      for (let i = 0; i < this.#taps; i++) {
        // Tap i weighs input sample (base - half + 1 + i); the output sits at base + frac.
        const t = i - half + 1 - frac;
        const x = 2 * cutoff * t;
        const sinc = x === 0 ? 1 : Math.sin(Math.PI * x) / (Math.PI * x);
        const w = (t + half) / (2 * half);
        const window = w <= 0 || w >= 1 ? 0 : 0.42 - 0.5 * Math.cos(2 * Math.PI * w) + 0.08 * Math.cos(4 * Math.PI * w);
        const v = 2 * cutoff * sinc * window;
        this.#table[p * this.#taps + i] = v;
        sum += v;
      }
      // Unity gain at DC for every phase.
      for (let i = 0; i < this.#taps; i++) this.#table[p * this.#taps + i]! /= sum;
    }
    // Primed with silence so the first output needs no look-behind.
    this.#historyFrames = this.#taps - 1;
    this.#work = new Float32Array(this.#historyFrames * channels * 4);
  }

  /** Converts interleaved `input` (frames × channels); returns what can be output so far. */
  push(input: Float32Array): Float32Array {
    const ch = this.channels;
    if (this.inRate === this.outRate) return input;
    const inFrames = input.length / ch;
    const total = this.#historyFrames + inFrames;
    // The history and the input side by side, in a buffer kept from push to push (a 20 ms push
    // made two arrays and copied the history out again: a third of the cost at 8 → 16 kHz).
    if (this.#work.length < total * ch) {
      const grown = new Float32Array(total * ch * 2);
      grown.set(this.#work.subarray(0, this.#historyFrames * ch));
      this.#work = grown;
    }
    const buf = this.#work;
    buf.set(input, this.#historyFrames * ch);
    const taps = this.#taps;
    const up = this.#up;
    const down = this.#down;
    const table = this.#table;
    // Output k's window starts at input frame floor(phase / up) and needs `taps` frames.
    const last = total - taps;
    const count = last < 0 ? 0 : Math.max(0, Math.ceil(((last + 1) * up - this.#phase) / down));
    const out = new Float32Array(count * ch);
    let phase = this.#phase;
    for (let k = 0; k < count; k++) {
      const start = Math.floor(phase / up);
      const coeffs = (phase - start * up) * taps;
      if (ch === 1) {
        let acc = 0;
        for (let i = 0; i < taps; i++) acc += buf[start + i]! * table[coeffs + i]!;
        out[k] = acc;
      } else if (ch === 2) {
        // Both channels in one pass over the coefficients.
        let left = 0;
        let right = 0;
        for (let i = 0, j = start * 2; i < taps; i++, j += 2) {
          const w = table[coeffs + i]!;
          left += buf[j]! * w;
          right += buf[j + 1]! * w;
        }
        out[k * 2] = left;
        out[k * 2 + 1] = right;
      } else {
        for (let c = 0; c < ch; c++) {
          let acc = 0;
          for (let i = 0, j = start * ch + c; i < taps; i++, j += ch) acc += buf[j]! * table[coeffs + i]!;
          out[k * ch + c] = acc;
        }
      }
      phase += down;
    }
    // Keep what the next outputs' windows still need, at the buffer's start.
    const keepFrom = Math.min(Math.floor(phase / up), total);
    this.#phase = phase - keepFrom * up;
    this.#historyFrames = total - keepFrom;
    buf.copyWithin(0, keepFrom * ch, total * ch);
    return out;
  }
}
