/**
 * Whether the browser still answers: a trivial evaluation in the meeting's page every few
 * seconds. A Chromium that stops answering (frozen, deadlocked, SIGSTOPped) records silence and
 * sees nothing of the meeting (no alone check, no end), so past the deadline the session is told
 * and ends with an error that says so, rather than running silent to its time limit.
 */
import type { Page } from "playwright-core";
import { within } from "../../shared/timeout.ts";

export const RESPONSIVE_CHECK_MS = 5_000;
/** Far beyond a loaded machine's slowest answer (seconds), short of losing the meeting unseen. */
export const UNRESPONSIVE_AFTER_MS = 20_000;

export function watchResponsive(page: Page, onUnresponsive: () => void, options: { everyMs?: number; deadlineMs?: number } = {}): { stop(): void } {
  const everyMs = options.everyMs ?? RESPONSIVE_CHECK_MS;
  const deadlineMs = options.deadlineMs ?? UNRESPONSIVE_AFTER_MS;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const check = async (): Promise<void> => {
    if (stopped) return;
    // A rejection (a navigation, a closed page) is an answer: only silence counts.
    const answered = await within(page.evaluate("1").then(() => true, () => true), deadlineMs);
    if (stopped) return;
    if (answered === undefined) {
      stopped = true;
      onUnresponsive();
      return;
    }
    timer = setTimeout(() => void check(), everyMs);
    timer.unref();
  };
  timer = setTimeout(() => void check(), everyMs);
  timer.unref();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
