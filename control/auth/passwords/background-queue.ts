/**
 * An in-process background queue for work that must happen after the response (Account rule 6:
 * the reset lookup and mail run after the 204, so neither timing nor errors reach the caller).
 * Jobs run one at a time in arrival order; a failing job is logged and never stops the queue.
 * `drain()` lets shutdown (and tests) wait for queued work.
 */
import type { Logger } from "../../../shared/log/logger.ts";

export interface BackgroundQueue {
  push(name: string, job: () => Promise<void>): void;
  /** Resolves once every job queued so far has finished. */
  drain(): Promise<void>;
}

export function createBackgroundQueue(logger: Logger): BackgroundQueue {
  let tail: Promise<void> = Promise.resolve();
  return {
    push(name, job) {
      tail = tail.then(job).catch((error: unknown) => {
        logger.error({ err: error, job: name }, "background job failed");
      });
    },
    drain: () => tail,
  };
}
