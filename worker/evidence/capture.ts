import { mkdir, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { within } from "../../shared/timeout.ts";
import type { Redactor } from "./redact.ts";

export const SCREENSHOT_FILE = "screenshot.png";
export const HTML_FILE = "page.html";
export const CONSOLE_FILE = "console.log";

/** A page that does not answer in this time is left without that file. */
const CAPTURE_TIMEOUT_MS = 10_000;

// A string, not a function: functions handed to page.evaluate from tsx may carry esbuild helpers.
// Works on a clone, so the page itself is untouched; no element is added to the page (Trusted Types).
const SNAPSHOT_SCRIPT = `(() => {
  const root = document.documentElement.cloneNode(true);
  const live = Array.from(document.querySelectorAll("input, textarea, select"));
  const copies = Array.from(root.querySelectorAll("input, textarea, select"));
  copies.forEach((el, i) => {
    const src = live[i];
    const had = (src && "value" in src && src.value !== "") || el.hasAttribute("value") || (el.textContent || "") !== "";
    if (el.tagName === "TEXTAREA") el.textContent = had ? "[redacted]" : "";
    else if (el.tagName !== "SELECT" && had) el.setAttribute("value", "[redacted]");
  });
  root.querySelectorAll("script, noscript, iframe, object, embed").forEach((el) => el.remove());
  root.querySelectorAll("*").forEach((el) => {
    for (const a of Array.from(el.attributes)) if (/^on/i.test(a.name) || a.name === "srcdoc") el.removeAttribute(a.name);
  });
  return "<!doctype html>\\n" + root.outerHTML;
})()`;

async function bounded<T>(work: Promise<T>, ms = CAPTURE_TIMEOUT_MS): Promise<T | null> {
  return (await within(work, ms).catch(() => undefined)) ?? null;
}

/** Writes aside and renames: a reader never sees half a file. */
export async function writeEvidenceFile(dir: string, name: string, data: string | Buffer): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const tmp = join(dir, `.${name}.tmp`);
  await writeFile(tmp, data, { mode: 0o600 });
  await rename(tmp, join(dir, name));
}

/** Between two tries of a screenshot that failed at once (the page was navigating). */
const RETRY_AFTER_MS = 250;

/**
 * The page as PNG (the viewport), or null when the page is gone or does not answer in
 * CAPTURE_TIMEOUT_MS. A try that fails at once is tried again within that time: a screenshot
 * taken while the page navigates (the bot opening the meeting's link, Teams moving to its light
 * page) loses the document Playwright waits on and throws, though the next one works.
 */
export async function screenshot(page: Page, onFailure?: (err: unknown) => void): Promise<Buffer | null> {
  const deadline = Date.now() + CAPTURE_TIMEOUT_MS;
  for (;;) {
    const left = deadline - Date.now();
    if (page.isClosed() || left <= 0) return null;
    try {
      return (await within(page.screenshot({ type: "png", timeout: left }), left)) ?? null;
    } catch (err) {
      onFailure?.(err);
      await new Promise((r) => setTimeout(r, RETRY_AFTER_MS));
    }
  }
}

/** The page's HTML with input values, scripts and secrets removed; null when the page is gone. */
export async function redactedHtml(page: Page, redact: Redactor): Promise<string | null> {
  if (page.isClosed()) return null;
  const html = await bounded(page.evaluate(SNAPSHOT_SCRIPT) as Promise<string>);
  if (typeof html !== "string") return null;
  const comment = `<!-- captured ${new Date().toISOString()} from ${page.url().replace(/--/g, "- -")} -->\n`;
  return redact(comment + html);
}
