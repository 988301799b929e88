/**
 * In the call, the browser's failures that leave no exit behind (issue: failures that explain
 * themselves): Chromium's audio service dying (Chromium restarts the service but not the page's
 * WebRTC playout, so the recording would hear silence to the end) and the browser no longer
 * answering (frozen or deadlocked: silence, and nothing of the meeting seen). Either stops the
 * session as an error that says what happened; a crash of the browser or its page is media.ts's.
 */
import type { Page } from "playwright-core";
import type { Logger } from "../../shared/log/logger.ts";
import type { BrowserHandle } from "../browser/launch.ts";
import { UNRESPONSIVE_AFTER_MS, watchResponsive } from "../browser/responsive.ts";
import type { StepSink } from "../evidence/index.ts";
import type { StopCause } from "./outcome.ts";

export const BROWSER_UNRESPONSIVE = `The browser (Chromium) stopped responding for ${UNRESPONSIVE_AFTER_MS / 1000} s during the call: the recording holds the meeting up to then.`;
export const AUDIO_SERVICE_DIED =
  "Chromium's audio service died during the call: the meeting's audio no longer reached the recording, which holds it up to then.";

export interface BrowserHealthOptions {
  browser: BrowserHandle;
  page: Page;
  logger: Logger;
  steps: StepSink;
  abort: (cause: StopCause) => void;
}

/** Watches from the admission until the bot starts to leave; `stop()` is idempotent. */
export function watchBrowserHealth(o: BrowserHealthOptions): { stop(): void } {
  const fail = (code: "audio_failed" | "browser_crashed", message: string): void => {
    o.steps.step("media_failed", { signal: code, detail: message });
    o.abort({ kind: "error", message, code });
  };
  // In the call the service always has the meeting to play: its death is not an idle exit.
  const unwatchAudioService = o.browser.onAudioServiceGone(() => fail("audio_failed", AUDIO_SERVICE_DIED));
  const responsive = watchResponsive(o.page, () => {
    o.logger.error({ after_ms: UNRESPONSIVE_AFTER_MS }, "chromium stopped answering");
    fail("browser_crashed", BROWSER_UNRESPONSIVE);
  });
  return {
    stop() {
      unwatchAudioService();
      responsive.stop();
    },
  };
}
