/**
 * A bot's page in the call stops drawing (worker/browser/drawing.ts) and the page cannot tell:
 * real Chromium, the window minimized and restored over CDP. The page stays "visible" with its
 * 100 ms timers on time, an action runs with the window restored and the window is minimized
 * again after, and the observer still reads a tile's speaking ring whose opacity fades in: the
 * fade lasts 20 s here, so only its end state, not the frames the paused page draws, can make
 * the sample read it within the test.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Page } from "playwright-core";
import { createLogger } from "../../shared/log/logger.ts";
import { pageDrawing } from "../../worker/browser/drawing.ts";
import { launchBrowser } from "../../worker/browser/launch.ts";
import { OBSERVER_GLOBAL, PAGE_SCRIPT } from "../../worker/observe/page-script.ts";
import { daemonInTempDir } from "../helpers/audio/daemon-dir.ts";
import { holdMediaLock } from "../harness/media-lock.ts";

// Real Chromium and PulseAudio: one such file at a time (see media-lock.ts).
await holdMediaLock();

const logger = createLogger({ level: process.env.LOG_LEVEL ?? "silent" });

const TILE = `<style>
  [data-tid="voice-level-stream-outline"]::before { content: ""; display: block; width: 10px; height: 10px; border: 2px solid rgb(127, 133, 245); opacity: 0; transition: opacity 20s linear; }
  [data-tid="voice-level-stream-outline"].lit::before { opacity: 1; }
</style>
<div data-stream-type="Video" data-tid="Ada Lovelace"><div data-tid="participant-info-nametag">Ada Lovelace</div><div data-tid="voice-level-stream-outline"></div></div>`;

const windowState = async (page: Page): Promise<string> => {
  const cdp = await page.context().newCDPSession(page);
  try {
    const { windowId } = await cdp.send("Browser.getWindowForTarget");
    return (await cdp.send("Browser.getWindowBounds", { windowId })).bounds.windowState ?? "normal";
  } finally {
    await cdp.detach();
  }
};

/** The names of the tiles in every sample the observer took since the last drain. */
const sampledTiles = async (page: Page): Promise<string[][]> => {
  const drain = JSON.parse(await page.evaluate(`window.${OBSERVER_GLOBAL}.drain()`)) as { samples: { tiles: { name: string | null }[] }[] };
  return drain.samples.map((s) => s.tiles.map((tile) => tile.name ?? ""));
};

test("a paused page stays visible and on time, draws for an action, and its fading speaking ring is read", { timeout: 120_000 }, async (t) => {
  const { dir, pulse, defer } = await daemonInTempDir(t, "media-drawing-", logger);
  const browser = await launchBrowser({ dir, pulseEnv: pulse.env, logger, mic: false });
  defer(() => browser.close());
  const page = browser.page;
  await page.addInitScript({ content: PAGE_SCRIPT });
  await page.goto(`data:text/html,${encodeURIComponent(TILE)}`);

  const drawing = pageDrawing(page, logger);
  await drawing.pause();
  assert.equal(await windowState(page), "minimized");
  await page.evaluate("window.ticks = []; window.timer = setInterval(() => window.ticks.push(performance.now()), 100)");
  await new Promise((r) => setTimeout(r, 1500));
  const { visibility, ticks } = (await page.evaluate("({ visibility: document.visibilityState, ticks: window.ticks.length })")) as { visibility: string; ticks: number };
  assert.equal(visibility, "visible", "the page is not told it is hidden");
  // Hidden-page throttling would allow one a second; unthrottled, 1.5 s holds about 15.
  assert.ok(ticks >= 5, `the page's 100 ms timer fired ${ticks} times in 1.5 s`);

  const during = await drawing.whileDrawing(() => windowState(page));
  assert.equal(during, "normal", "an action runs with the window restored");
  // The end of an action minimizes again without being awaited: wait for it.
  for (let i = 0; i < 50 && (await windowState(page)) !== "minimized"; i++) await new Promise((r) => setTimeout(r, 100));
  assert.equal(await windowState(page), "minimized", "minimized again once no action is left");

  await sampledTiles(page);
  await page.evaluate(`document.querySelector('[data-tid="voice-level-stream-outline"]').classList.add("lit")`);
  let read: string[][] = [];
  for (let i = 0; i < 50 && !read.some((names) => names.includes("Ada Lovelace")); i++) {
    await new Promise((r) => setTimeout(r, 100));
    read = [...read, ...(await sampledTiles(page))];
  }
  assert.ok(read.some((names) => names.includes("Ada Lovelace")), "the ring fading in reads as speaking");
  const opacity = Number(await page.evaluate(`getComputedStyle(document.querySelector('[data-tid="voice-level-stream-outline"]'), "::before").opacity`));
  assert.ok(opacity < 1, `the ring is still fading (opacity ${opacity})`);

  await page.evaluate(`document.querySelector('[data-tid="voice-level-stream-outline"]').classList.remove("lit")`);
  await new Promise((r) => setTimeout(r, 300));
  await sampledTiles(page);
  await new Promise((r) => setTimeout(r, 300));
  assert.ok((await sampledTiles(page)).every((names) => names.length === 0), "a ring fading out is not speaking");

  await drawing.resume();
  assert.equal(await windowState(page), "normal", "resume() draws for good");
});
