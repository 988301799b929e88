/**
 * The worker touches its journal's modification time while it runs, so that after a crash that
 * took it and its control plane down, recovery knows when the session stopped
 * (control/bot/last-alive.ts) even when nothing else was written: a `record: false` session in a
 * quiet meeting. A metadata update every 10 s, nothing synced.
 */
import { utimes } from "node:fs/promises";

export const HEARTBEAT_MS = 10_000;

export function startHeartbeat(path: string, everyMs = HEARTBEAT_MS): { stop(): void } {
  const timer = setInterval(() => {
    const now = new Date();
    utimes(path, now, now).catch(() => undefined);
  }, everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
