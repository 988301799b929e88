import { setTimeout as sleep } from "node:timers/promises";
import type { Locator, Page } from "playwright-core";

/** Short enough that a blocked click (a dialog on top) returns to the loop, which then handles it. */
export const CLICK_TIMEOUT_MS = 3000;

/** The first candidate selector with a visible element, and which selector it was. */
export async function firstVisible(page: Page, selectors: readonly string[]): Promise<{ locator: Locator; selector: string } | null> {
  for (const selector of selectors) {
    const locator = page.locator(selector).first();
    if (await locator.isVisible().catch(() => false)) return { locator, selector };
  }
  return null;
}

/** Clicks the first visible candidate; returns the selector clicked, or null. Never throws. */
export async function clickFirst(page: Page, selectors: readonly string[]): Promise<string | null> {
  const hit = await firstVisible(page, selectors);
  if (!hit) return null;
  try {
    await hit.locator.click({ timeout: CLICK_TIMEOUT_MS });
    return hit.selector;
  } catch (err) {
    // 2026 facts: a transparent shroud over the light pre-join form intercepts pointer clicks.
    // With no dialog open (a dialog must be answered, not pressed through), press it by keyboard.
    if (!/intercepts pointer events/i.test((err as Error).message) || (await dialogOpen(page))) return null;
    try {
      await hit.locator.focus({ timeout: 1000 });
      await page.keyboard.press("Enter");
      return `${hit.selector} (keyboard)`;
    } catch {
      return null;
    }
  }
}

async function dialogOpen(page: Page): Promise<boolean> {
  return page
    .locator('[role="dialog"][aria-modal="true"], [role="alertdialog"], dialog[open]')
    .first()
    .isVisible()
    .catch(() => false);
}

/** Sleeps, waking early with the signal's reason thrown when it aborts. */
export async function pause(ms: number, signal?: AbortSignal): Promise<void> {
  signal?.throwIfAborted();
  try {
    await sleep(ms, undefined, signal ? { signal } : undefined);
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    throw err;
  }
}

/** Polls `check` until it is true or `timeoutMs` passes. */
export async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, stepMs = 150): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return true;
    if (performance.now() >= deadline) return false;
    await sleep(stepMs);
  }
}

/** "true"/"false" from aria-checked, else the checked state of an input; null when unreadable. */
export async function switchState(locator: Locator): Promise<boolean | null> {
  const aria = await locator.getAttribute("aria-checked", { timeout: 1000 }).catch(() => null);
  if (aria === "true" || aria === "false") return aria === "true";
  // A native checkbox keeps its `checked` attribute at the initial state whatever is clicked
  // (teams-dom.md §4 "checked"): only the live property says whether it is on now.
  const native = await locator
    .evaluate((e) => e instanceof HTMLInputElement && (e.type === "checkbox" || e.type === "radio"), undefined, { timeout: 1000 })
    .catch(() => false);
  if (native) return locator.isChecked({ timeout: 1000 }).catch(() => null);
  const checked = await locator.getAttribute("checked", { timeout: 1000 }).catch(() => null);
  if (checked !== null) return checked !== "false";
  return locator.isChecked({ timeout: 1000 }).catch(() => null);
}
