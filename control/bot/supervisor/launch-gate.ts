/**
 * How many workers of this control plane start Chromium at the same moment (BROWSER_STARTS_AT_ONCE,
 * by default one per CPU core). Eight starts at once on two cores share the machine until all
 * eight reach the lobby together, late; in turns, the first bots are in the lobby well before the
 * last (bench-bot's burst, README "Bot density"). Turns go first come, first served; a worker that
 * exits (crashed, killed, done) gives back its turn and its place in the queue.
 *
 * A turn lasts at most `turnLimitMs`: on a machine already busy with meetings one start can take
 * ten seconds or more, and a queue of strict turns then kept the twelfth of twelve bots out for
 * 160 s (against 12-30 s all at once). Past the limit the next worker goes too, so turns only
 * ever spread starts out by a few seconds each.
 */
import { availableParallelism } from "node:os";

/** About one start of Chromium on an idle core. */
const TURN_LIMIT_MS = 4_000;

export interface LaunchGate {
  /** `go` is called once the worker `key` may start Chromium (at once when a turn is free). */
  want(key: number, go: () => void): void;
  /** The worker's Chromium is up, failed, or the worker is gone: its turn (or its wait) ends. */
  done(key: number): void;
  /** Workers in their turn now, and waiting for one. */
  readonly starting: number;
  readonly waiting: number;
}

/** `limit` 0 means one turn per CPU core. */
export function createLaunchGate(limit: number, turnLimitMs = TURN_LIMIT_MS): LaunchGate {
  const turns = limit > 0 ? limit : availableParallelism();
  const running = new Map<number, NodeJS.Timeout>();
  const queue = new Map<number, () => void>();
  const end = (key: number): void => {
    const timer = running.get(key);
    if (timer === undefined) return;
    clearTimeout(timer);
    running.delete(key);
    next();
  };
  const next = (): void => {
    for (const [key, go] of queue) {
      if (running.size >= turns) return;
      queue.delete(key);
      const timer = setTimeout(() => end(key), turnLimitMs);
      timer.unref();
      running.set(key, timer);
      go();
    }
  };
  return {
    want(key, go) {
      if (running.has(key) || queue.has(key)) return;
      queue.set(key, go);
      next();
    },
    done(key) {
      queue.delete(key);
      end(key);
    },
    get starting() {
      return running.size;
    },
    get waiting() {
      return queue.size;
    },
  };
}
