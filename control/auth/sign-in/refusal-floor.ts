/**
 * Sign-in rule 2: a refused login takes at least `SignInRefusalFloor`, so response time does not
 * tell "no such account" from "wrong password" from "locked". Measured on the monotonic clock
 * (not the injectable wall clock): it is about real elapsed time.
 */
import { setTimeout as sleep } from "node:timers/promises";

export function refusalFloor(floorMs: number): { wait(): Promise<void> } {
  const started = performance.now();
  return {
    async wait() {
      const left = floorMs - (performance.now() - started);
      // +1 ms: timers may fire a fraction early; the floor is a lower bound.
      if (left > 0) await sleep(Math.ceil(left) + 1);
    },
  };
}
