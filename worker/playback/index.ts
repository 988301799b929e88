/**
 * The microphone of a session, when MIC_PLAYBACK_ENABLED: the raw-mic init script (when
 * DISABLE_NOISE_SUPPRESSION) and the handler of the audio `request` ops. Returns null with
 * playback off: the launch, the join and the 409 answers stay as they were.
 */
import type { BrowserContext, Page } from "playwright-core";
import type { InitMessage, SessionStatus } from "../../shared/ipc/messages.ts";
import type { Logger } from "../../shared/log/logger.ts";
import { createPlayback, type Playback } from "./controller.ts";
import { installRawMicConstraints } from "./raw-mic.ts";

export type { Playback } from "./controller.ts";

export interface MicDeps {
  init: InitMessage;
  pulseEnv: Record<string, string>;
  browser: { context: BrowserContext; page: Page };
  status: () => SessionStatus | null;
  logger: Logger;
}

export async function startMicPlayback(deps: MicDeps): Promise<Playback | null> {
  const { init, browser, logger } = deps;
  if (!init.mic.enabled) return null;
  if (init.mic.disableNoiseSuppression) await installRawMicConstraints(browser.context);
  return createPlayback({
    pulseEnv: deps.pulseEnv,
    page: browser.page,
    workDir: init.workDir,
    logger,
    inCall: () => {
      const s = deps.status();
      return s === "recording" || s === "connected";
    },
  });
}
