import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";

/** Waits until `check` holds (background work), polling every 10 ms; fails after `timeoutMs`. */
export async function eventually(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 3_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; ; await sleep(10)) {
    if (await check()) return;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
  }
}
