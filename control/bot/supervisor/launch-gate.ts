/**
 * How many workers of this control plane start Chromium at the same moment (BROWSER_STARTS_AT_ONCE,
 * by default one per CPU core). Eight starts at once on two cores share the machine until all
 * eight reach the lobby together, late; in turns, the first bots are in the lobby well before the
 * last, which comes no later (bench-bot's burst, README "Bot density"). Turns go first come, first
 * served; a worker that exits (crashed, killed, done) gives back its turn and its place in the
 * queue.
 */
import { availableParallelism } from "node:os";

export interface LaunchGate {
  /** `go` is called once the worker `key` may start Chromium (at once when a turn is free). */
  want(key: number, go: () => void): void;
  /** The worker's Chromium is up, failed, or the worker is gone: its turn (or its wait) ends. */
  done(key: number): void;
  /** Workers starting Chromium now, and waiting for their turn. */
  readonly starting: number;
  readonly waiting: number;
}

/** `limit` 0 means one turn per CPU core. */
export function createLaunchGate(limit: number): LaunchGate {
  const turns = limit > 0 ? limit : availableParallelism();
  const running = new Set<number>();
  const queue = new Map<number, () => void>();
  const next = (): void => {
    for (const [key, go] of queue) {
      if (running.size >= turns) return;
      queue.delete(key);
      running.add(key);
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
      if (running.delete(key)) next();
    },
    get starting() {
      return running.size;
    },
    get waiting() {
      return queue.size;
    },
  };
}
