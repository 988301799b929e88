/**
 * One timer for every FrameSpreader of the control plane (spreader.ts). A session's listeners of
 * four formats read four streams whose bursts come from the worker in the same instant; with a
 * timer each, the control plane would wake four times per burst to send their second halves.
 * Here a wake-up sends every half due within COALESCE_MS of it, a little early for some, so the
 * streams of a session, and of sessions whose bursts happen to fall together, share it. Clearing
 * the timer when a burst comes early costs nothing; a timer fired for nobody re-arms for the next
 * one due. What it saved is inside the noise of `make bench-listen` (four formats, the control
 * plane's part: 1.23 and 2.37 % of a core with a timer per stream, one run each way; 1.07 and 1.8
 * with this clock, 0.8 and 0.95 without spreading, 2026-11-29): most of the spreading's cost is
 * the second write to each consumer, which a loopback charges to the sender.
 */

/** A half due this soon after a wake-up goes with it (a few ms early is nothing to a listener). */
export const COALESCE_MS = 5;

export interface Due {
  /** Sends what waits; the clock has already forgotten it. */
  flush(): void;
}

export class SpreadClock {
  readonly #due = new Map<Due, number>();
  #timer: NodeJS.Timeout | null = null;
  #at = Number.POSITIVE_INFINITY;

  /** `item.flush()` in `ms` (replacing any earlier schedule of it). */
  schedule(item: Due, ms: number): void {
    const at = Date.now() + ms;
    this.#due.set(item, at);
    if (at < this.#at) this.#arm(at);
  }

  /** `item` no longer waits (it was flushed or stopped by its owner). */
  cancel(item: Due): void {
    this.#due.delete(item);
    if (this.#due.size === 0) this.#disarm();
  }

  /** Items waiting (tests). */
  get size(): number {
    return this.#due.size;
  }

  #arm(at: number): void {
    this.#disarm();
    this.#at = at;
    this.#timer = setTimeout(() => this.#fire(), Math.max(0, at - Date.now()));
  }

  #disarm(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#at = Number.POSITIVE_INFINITY;
  }

  #fire(): void {
    this.#timer = null;
    this.#at = Number.POSITIVE_INFINITY;
    const horizon = Date.now() + COALESCE_MS;
    const ready: Due[] = [];
    let next = Number.POSITIVE_INFINITY;
    for (const [item, at] of this.#due) {
      if (at > horizon) next = Math.min(next, at);
      else {
        ready.push(item);
        this.#due.delete(item);
      }
    }
    if (next < Number.POSITIVE_INFINITY) this.#arm(next);
    for (const item of ready) item.flush();
  }
}

/** The control plane's one clock. */
export const spreadClock = new SpreadClock();
