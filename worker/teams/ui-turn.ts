import type { Page } from "playwright-core";

const tails = new WeakMap<Page, Promise<unknown>>();
type Wrapper = <T>(action: () => Promise<T>) => Promise<T>;
const wrappers = new WeakMap<Page, Wrapper>();

/**
 * Runs `action` once every earlier UI action on the same page has finished. Menu-driven steps
 * (More → Audio settings → Off) and single clicks (the mic button) must not interleave: a click
 * elsewhere closes an open menu, and the menu walk then finds nothing to choose. The action runs
 * inside the page's wrapper, if one is set (worker/browser/drawing.ts: the page draws meanwhile).
 */
export function withUiTurn<T>(page: Page, action: () => Promise<T>): Promise<T> {
  const previous = tails.get(page) ?? Promise.resolve();
  const wrapped = () => {
    const wrap = wrappers.get(page);
    return wrap ? wrap(action) : action();
  };
  const run = previous.then(wrapped, wrapped);
  tails.set(page, run.catch(() => undefined));
  return run;
}

/** Every UI turn on `page` from now on runs through `wrap`. */
export function wrapUiTurns(page: Page, wrap: Wrapper): void {
  wrappers.set(page, wrap);
}
