/**
 * A page that draws only while the bot acts on it (issue #20). Nobody looks at a bot's screen,
 * yet every change of the meeting page (roster, reactions, tiles) makes Chromium run style,
 * layout, paint, a compositor commit and a frame in the display compositor. Minimizing the
 * browser's window stops the frames; the page is not told (`document.visibilityState` stays
 * "visible", no visibilitychange), its timers and the observer's 100 ms sampler keep their pace,
 * WebRTC and the audio play on. requestAnimationFrame slows to about once a second and CSS
 * transitions advance only on the frames left, which the observer's ring check allows for
 * (worker/observe/page-script.ts); Playwright's clicks wait for two animation frames to see an
 * element stand still, so every action on the page first restores the window (`whileDrawing`)
 * and minimizes it again after.
 *
 * A/B, bench/bot/flags-ab.ts `AB_MINIMIZED=1` (one bot each side at once in the realistic meeting
 * with video, 3 rounds × 20 s): see the commit that added this file.
 */
import type { CDPSession, Page } from "playwright-core";
import type { Logger } from "../../shared/log/logger.ts";
import { within } from "../../shared/timeout.ts";

export interface PageDrawing {
  /** Stops the page's frames until the next action (minimizes the window), unless switched off (pauseDrawingEnabled). */
  pause(): Promise<void>;
  /** Runs `action` with the page drawing; frames stop again once no action is left. */
  whileDrawing<T>(action: () => Promise<T>): Promise<T>;
  /** Draws from now on, for good (before leaving: the last clicks and screenshots). */
  resume(): Promise<void>;
}

type WindowState = "normal" | "minimized";
/** A browser that does not answer this fast is hung: actions go on without waiting for it. */
const CDP_TIMEOUT_MS = 5_000;

/**
 * Whether a bot's page stops drawing in the call: yes unless TOAMAISUTAA_PAUSE_DRAWING=0, which
 * exists only so that `make bench-bot` can A/B it (BENCH_PAUSE_DRAWING=0).
 */
function pauseDrawingEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.TOAMAISUTAA_PAUSE_DRAWING !== "0";
}

export function pageDrawing(page: Page, logger: Logger): PageDrawing {
  let actions = 0;
  let paused = false;
  let resumed = false;
  let failed = false;
  let applied: WindowState = "normal";
  let queue: Promise<void> = Promise.resolve();

  let target: Promise<{ cdp: CDPSession; windowId: number }> | null = null;
  const browserWindow = () =>
    (target ??= page
      .context()
      .newCDPSession(page)
      .then(async (cdp) => ({ cdp, windowId: (await cdp.send("Browser.getWindowForTarget")).windowId })));

  // One CDP call at a time, each applying the state wanted when it runs: a burst of actions ends
  // in the right state whatever order their ends come in.
  const settle = (): Promise<void> => {
    queue = queue.then(async () => {
      const wanted: WindowState = paused && !resumed && actions === 0 && !failed ? "minimized" : "normal";
      if (wanted === applied || page.isClosed()) return;
      try {
        const done = await within(
          browserWindow().then(({ cdp, windowId }) => cdp.send("Browser.setWindowBounds", { windowId, bounds: { windowState: wanted } })),
          CDP_TIMEOUT_MS,
        );
        if (done === undefined) throw new Error(`the browser did not answer within ${CDP_TIMEOUT_MS} ms`);
        applied = wanted;
      } catch (err) {
        if (page.isClosed()) return;
        // A browser without window states: it draws as before, which costs CPU and nothing else.
        failed = true;
        logger.warn({ err }, "cannot stop the page drawing; it keeps drawing");
      }
    });
    return queue;
  };

  return {
    pause() {
      paused = pauseDrawingEnabled();
      return settle();
    },
    async whileDrawing(action) {
      actions++;
      try {
        await settle();
        return await action();
      } finally {
        actions--;
        void settle();
      }
    },
    resume() {
      resumed = true;
      return settle();
    },
  };
}
