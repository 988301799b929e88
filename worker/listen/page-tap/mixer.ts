/**
 * The page tap's mix: what every audible source of the page (page-script.ts) plays, summed as the
 * browser's output sums it, at the rate of the first source (Teams: 48 kHz Opus; another source
 * at another rate is converted to it). Sources arrive in bursts, each on its own schedule (each
 * is pulled by its own audio output), so each has a cursor on one timeline: a chunk is added at
 * its source's cursor, and the mix is emitted up to the earliest cursor of the sources still
 * delivering. A source silent for STALL_MS (a suspended Web Audio context, a stream with nothing
 * to pull it) no longer holds the others back; when it comes back it resumes at the emitted
 * position. With one source (Teams: one server-mixed stream) each chunk goes out as it comes.
 */
import { Resampler } from "./resampler.ts";

/** A source that delivered nothing for this long stops holding the mix back. */
export const STALL_MS = 250;
/** More sources than any page plays at once: past it new ones are ignored (the page can call the binding). */
export const MAX_SOURCES = 32;
/** What may wait for a late source: past it, the mix moves on (the ring's size). */
const RING_SECONDS = 2;

interface Source {
  /** Absolute frame position of its next sample. */
  cursor: number;
  gain: number;
  lastAt: number;
  resampler: Resampler | null;
  channels: number;
}

export class TapMixer {
  readonly channels: 1 | 2;
  readonly #sources = new Map<string, Source>();
  /** 0 until the first audio; then the mix's rate for good. */
  #rate = 0;
  #ring = new Float32Array(0);
  #ringFrames = 0;
  /** Frames emitted so far (absolute). */
  #emitted = 0;
  readonly #now: () => number;

  constructor(channels: 1 | 2, now: () => number = () => performance.now()) {
    this.channels = channels;
    this.#now = now;
  }

  /** The mix's sample rate (0 before any audio). */
  get rate(): number {
    return this.#rate;
  }

  /** The source's volume as the page plays it (0 when paused or muted). */
  setGain(id: string, gain: number): void {
    const s = this.#sources.get(id);
    if (s) s.gain = gain;
    else if (this.#sources.size < MAX_SOURCES) this.#sources.set(id, { cursor: this.#emitted, gain, lastAt: this.#now(), resampler: null, channels: 0 });
  }

  end(id: string): Float32Array {
    this.#sources.delete(id);
    return this.#emit();
  }

  /**
   * Adds `data` (interleaved, `channels` 1 or 2, at `rate`) from source `id`; returns the mix
   * that is complete now (possibly empty).
   */
  push(id: string, rate: number, channels: number, data: Float32Array): Float32Array {
    const now = this.#now();
    if (this.#rate === 0) {
      this.#rate = rate;
      this.#ringFrames = rate * RING_SECONDS;
      this.#ring = new Float32Array(this.#ringFrames * this.channels);
    }
    const mixRate = this.#rate;
    let s = this.#sources.get(id);
    if (!s) {
      if (this.#sources.size >= MAX_SOURCES) return new Float32Array(0);
      s = { cursor: this.#emitted, gain: 1, lastAt: now, resampler: null, channels };
      this.#sources.set(id, s);
    }
    if (s.channels !== channels || (s.resampler ? s.resampler.inRate !== rate : rate !== mixRate)) {
      s.channels = channels;
      s.resampler = rate === mixRate ? null : new Resampler(rate, mixRate, channels);
    }
    // A source that fell out (stalled) comes back at the present, not in the past.
    if (s.cursor < this.#emitted) s.cursor = this.#emitted;
    s.lastAt = now;
    const frames = s.resampler ? s.resampler.push(data) : data;
    this.#add(s, frames, channels);
    return this.#emit();
  }

  #add(s: Source, data: Float32Array, channels: number): void {
    const out = this.channels;
    const n = data.length / channels;
    const ring = this.#ring;
    const size = this.#ringFrames;
    // Too far ahead of the slowest source: the mix moves on rather than overwrite.
    if (s.cursor + n - this.#emitted > size) this.#emitTo(s.cursor + n - size);
    const g = s.gain;
    for (let i = 0; i < n; i++) {
      const at = ((s.cursor + i) % size) * out;
      if (channels === out) for (let c = 0; c < out; c++) ring[at + c]! += data[i * channels + c]! * g;
      else if (out === 1) ring[at]! += ((data[i * 2]! + data[i * 2 + 1]!) / 2) * g;
      else {
        const v = data[i]! * g;
        ring[at]! += v;
        ring[at + 1]! += v;
      }
    }
    s.cursor += n;
  }

  #emit(): Float32Array {
    const now = this.#now();
    let to = Infinity;
    let furthest = this.#emitted;
    for (const s of this.#sources.values()) {
      furthest = Math.max(furthest, s.cursor);
      if (now - s.lastAt <= STALL_MS && s.channels > 0) to = Math.min(to, s.cursor);
    }
    if (to === Infinity) to = furthest;
    return this.#emitTo(to);
  }

  #emitTo(to: number): Float32Array {
    const n = Math.max(0, to - this.#emitted);
    const ch = this.channels;
    const out = new Float32Array(n * ch);
    const size = this.#ringFrames;
    for (let i = 0; i < n; i++) {
      const at = ((this.#emitted + i) % size) * ch;
      for (let c = 0; c < ch; c++) {
        out[i * ch + c] = this.#ring[at + c]!;
        this.#ring[at + c] = 0;
      }
    }
    this.#emitted += n;
    return out;
  }
}
