// Shared set-up for the Teams adapter tests: one Chromium per test file, a context per test.
import { after, before, type TestContext } from "node:test";
import { chromium, type Browser, type LaunchOptions, type Page } from "playwright-core";
import { createLogger, type Logger } from "../../shared/log/logger.ts";
import { withFeatures } from "../../worker/browser/features.ts";
import { CHROMIUM_ARGS } from "../../worker/browser/launch.ts";
import { startTeamsFixture, type TeamsFixture } from "../fixture/teams/server.ts";

/** The bot's own flags and feature lists (worker/browser/launch.ts), so adapter tests run as the bot does. */
export function launchOptions(extraArgs: readonly string[] = []): LaunchOptions {
  const { args, ignoreDefaultArgs } = withFeatures([...CHROMIUM_ARGS, ...extraArgs]);
  return { executablePath: "/usr/bin/chromium", headless: true, args, ignoreDefaultArgs };
}

export interface Harness {
  browser: Browser;
  fixture: TeamsFixture;
  logger: Logger;
}

export async function startHarness(extraArgs: string[] = []): Promise<Harness> {
  const fixture = await startTeamsFixture();
  try {
    const browser = await chromium.launch(launchOptions(extraArgs));
    return { browser, fixture, logger: createLogger({ level: process.env.LOG_LEVEL ?? "silent" }) };
  } catch (err) {
    await fixture.close();
    throw err;
  }
}

export async function stopHarness(h: Harness | undefined): Promise<void> {
  await h?.browser.close().catch(() => undefined);
  await h?.fixture.close().catch(() => undefined);
}

/** A fresh browser context and page for one test, closed in t.after. */
export async function newPage(t: TestContext, h: Harness): Promise<Page> {
  const context = await h.browser.newContext();
  t.after(() => context.close().catch(() => undefined));
  return context.newPage();
}

/**
 * One Chromium for a file of static-page tests (no fixture server), launched before the file's
 * tests and closed after them; `open(t, document)` loads `document` in a fresh context.
 */
export function staticPages(): { open(t: Pick<TestContext, "after">, document: string): Promise<Page> } {
  let browser: Browser | undefined;
  before(async () => {
    browser = await chromium.launch(launchOptions());
  });
  after(() => browser?.close());
  return {
    async open(t, document) {
      if (!browser) throw new Error("staticPages: the browser starts in the file's before hook");
      const context = await browser.newContext();
      t.after(() => context.close());
      const page = await context.newPage();
      await page.setContent(document);
      return page;
    },
  };
}
