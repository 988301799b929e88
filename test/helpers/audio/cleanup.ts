import type { TestContext } from "node:test";

/**
 * Cleanups that run last-registered-first, like `defer`: node:test runs t.after hooks in
 * registration order, which would remove a worker dir while its daemon still writes into it.
 * Each cleanup runs even when an earlier one throws.
 */
export type Defer = (fn: () => unknown) => void;

export function cleanupStack(t: TestContext): Defer {
  const stack: (() => unknown)[] = [];
  t.after(async () => {
    const errors: unknown[] = [];
    for (const fn of stack.reverse()) {
      try {
        await fn();
      } catch (err) {
        errors.push(err);
      }
    }
    if (errors.length > 0) throw new AggregateError(errors, "cleanup failed");
  });
  return (fn) => {
    stack.push(fn);
  };
}
