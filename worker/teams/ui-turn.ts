import type { Page } from "playwright-core";

const tails = new WeakMap<Page, Promise<unknown>>();

/**
 * Runs `action` once every earlier UI action on the same page has finished. Menu-driven steps
 * (More → Audio settings → Off) and single clicks (the mic button) must not interleave: a click
 * elsewhere closes an open menu, and the menu walk then finds nothing to choose.
 */
export function withUiTurn<T>(page: Page, action: () => Promise<T>): Promise<T> {
  const previous = tails.get(page) ?? Promise.resolve();
  const run = previous.then(action, action);
  tails.set(page, run.catch(() => undefined));
  return run;
}
