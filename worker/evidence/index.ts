/**
 * A session's evidence (issue #16) under RECORDINGS_DIR/.evidence/<session_id>/: `steps.json`
 * for every session; for one that ends in `error` or `not_admitted` also a screenshot, the page's
 * redacted HTML and its last 500 console lines; on request, a screenshot of the live page.
 */
import { mkdir, readdir } from "node:fs/promises";
import type { Page } from "playwright-core";
import type { Logger } from "../../shared/log/logger.ts";
import { CONSOLE_FILE, HTML_FILE, SCREENSHOT_FILE, redactedHtml, screenshot, writeEvidenceFile } from "./capture.ts";
import { tailConsole, type ConsoleTail } from "./console.ts";
import { createRedactor, secretsOfLink, type Redactor } from "./redact.ts";
import { StepLog } from "./steps.ts";

export type { StepSink } from "./steps.ts";

export interface Evidence {
  readonly steps: StepLog;
  /** Starts listening to the page's console (before it navigates). */
  attach(page: Page): void;
  /** Screenshot, HTML and console of the page as it is now (the failure on screen). */
  captureFailure(page: Page): Promise<void>;
  /** Only the console lines collected so far: the page is dead or frozen (nothing to draw or read). */
  captureConsole(): Promise<void>;
  /** A screenshot now, for an operator looking at a live bot: its file name and size. */
  captureLive(page: Page): Promise<{ name: string; bytes: number; created_at: string } | null>;
  /** steps.json written; the names of every file in the folder. */
  close(): Promise<string[]>;
}

export function createEvidence(options: { dir: string | null; meetingUrl: string; logger: Logger }): Evidence {
  const { dir, logger } = options;
  const redact: Redactor = createRedactor(secretsOfLink(options.meetingUrl));
  const steps = new StepLog(dir, redact);
  let consoleTail: ConsoleTail | null = null;
  const ready = dir ? mkdir(dir, { recursive: true, mode: 0o700 }).then(() => true, (err: unknown) => (logger.warn({ err }, "evidence folder cannot be created"), false)) : Promise.resolve(false);

  const write = async (name: string, data: string | Buffer): Promise<boolean> => {
    if (!dir || !(await ready)) return false;
    try {
      await writeEvidenceFile(dir, name, data);
      return true;
    } catch (err) {
      logger.warn({ err, name }, "evidence file could not be written");
      return false;
    }
  };

  const writeConsole = () => write(CONSOLE_FILE, `${(consoleTail?.lines() ?? []).join("\n")}\n`);

  return {
    steps,
    attach(page) {
      consoleTail ??= tailConsole(page, redact);
    },
    async captureFailure(page) {
      const [png, html] = await Promise.all([screenshot(page), redactedHtml(page, redact)]);
      if (png) await write(SCREENSHOT_FILE, png);
      if (html) await write(HTML_FILE, html);
      await writeConsole();
      logger.info({ screenshot: png !== null, html: html !== null }, "evidence captured");
    },
    async captureConsole() {
      await writeConsole();
      logger.info({ screenshot: false, html: false }, "evidence captured (the page is gone: its console only)");
    },
    async captureLive(page) {
      let told = false;
      const png = await screenshot(page, (err) => {
        if (!told) logger.info({ err }, "a live screenshot failed; trying again");
        told = true;
      });
      if (!png) return null;
      const at = new Date();
      const name = `live-${at.toISOString().replace(/[-:]/g, "").replace(".", "-")}.png`;
      if (!(await write(name, png))) return null;
      steps.step("live_screenshot", { detail: name });
      return { name, bytes: png.length, created_at: at.toISOString() };
    },
    async close() {
      consoleTail?.dispose();
      await steps.flush();
      if (!dir) return [];
      return (await readdir(dir).catch(() => [] as string[])).filter((n) => !n.startsWith(".")).sort();
    },
  };
}
