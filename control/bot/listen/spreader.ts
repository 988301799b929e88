/**
 * Spreads the worker's audio over time when it comes in bursts, so that a consumer receives it
 * about as it is spoken. The page sends the meeting's frames four to a message (ENCODED_BATCH,
 * worker/listen/page-tap/page-script.ts: a message costs about the same whatever it holds), so
 * the worker's stream brings 80 ms at once, every 80 ms; sent on as it comes, a consumer would
 * see nothing for 80 ms and more with any jitter, where the issue asks for no gap over 100 ms.
 *
 * A burst of more than MAX_AT_ONCE frames goes in two halves: the first at once, the second
 * SECOND_HALF_MS later (or with the next burst, if that comes first: order is kept), on the
 * control plane's one clock (spread-clock.ts: one wake-up for the streams of every format a
 * session is heard in, not one per frame, listener or stream): what arrives 80 ms apart leaves
 * 40 ms apart, and half the frames wait 40 ms more, well inside the latency target (median 150,
 * p95 250 ms).
 */
import { FRAME_MS } from "../../../shared/listen/protocol.ts";
import { benchOverride } from "../../../shared/process/bench-override.ts";
import { spreadClock, type SpreadClock } from "./spread-clock.ts";

/** Frames that go together without splitting: 40 ms. */
export const MAX_AT_ONCE = 2;
/** The wait of a burst's second half: what its first half holds when the page sends four. */
export const SECOND_HALF_MS = MAX_AT_ONCE * FRAME_MS;

/**
 * MAX_AT_ONCE unless TOAMAISUTAA_LISTEN_SPREAD_FRAMES says otherwise: `make bench-listen` A/Bs it
 * (BENCH_SPREAD_FRAMES=64: bursts go as they come).
 */
export function maxAtOnce(env: NodeJS.ProcessEnv = process.env): number {
  return benchOverride("TOAMAISUTAA_LISTEN_SPREAD_FRAMES", MAX_AT_ONCE, env);
}

export class FrameSpreader {
  readonly #deliver: (frames: Buffer[]) => void;
  readonly #clock: SpreadClock;
  readonly #maxAtOnce: number;
  #pending: Buffer[] = [];

  constructor(deliver: (frames: Buffer[]) => void, options: { clock?: SpreadClock; atOnce?: number } = {}) {
    this.#deliver = deliver;
    this.#clock = options.clock ?? spreadClock;
    this.#maxAtOnce = options.atOnce ?? maxAtOnce();
  }

  push(frames: Buffer[]): void {
    if (frames.length === 0) return;
    // What still waits goes first: a burst that comes early takes its turn after it.
    this.flush();
    if (frames.length <= this.#maxAtOnce) return this.#deliver(frames);
    const now = Math.ceil(frames.length / 2);
    this.#deliver(frames.slice(0, now));
    this.#pending = frames.slice(now);
    this.#clock.schedule(this, SECOND_HALF_MS);
  }

  /** Delivers what waits now (its time came, a burst followed, or the stream ends). */
  flush(): void {
    if (this.#pending.length === 0) return;
    this.#clock.cancel(this);
    const frames = this.#pending;
    this.#pending = [];
    this.#deliver(frames);
  }

  /** Drops what waits (nobody listens any more). */
  stop(): void {
    if (this.#pending.length > 0) this.#clock.cancel(this);
    this.#pending = [];
  }
}
