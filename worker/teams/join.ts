import type { Page } from "playwright-core";
import type { Logger } from "../../shared/log/logger.ts";
import { blockedMessage } from "./messages.ts";
import { watchNavigation, type NavigationWatch } from "./navigation.ts";
import { clickFirst, pause } from "./page-actions.ts";
import { fillDisplayName, turnOff } from "./prejoin.ts";
import { classify, probePage } from "./probe.ts";
import { ACTION_SELECTORS, SIGNIN_URL } from "./signals.ts";
import { webJoinUrl } from "./url.ts";

export type JoinOutcome =
  | { kind: "lobby"; signal: string }
  | { kind: "in_call"; signal: string }
  | { kind: "denied"; signal: string }
  | { kind: "error"; message: string };

export interface JoinOptions {
  url: string;
  displayName: string;
  logger: Logger;
  signal?: AbortSignal;
  /** The whole join, from opening the link to the lobby or the call. */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 90_000;
const STEP_MS = 250;
/** Teams sometimes swallows a click on "Join now" while it settles; press again after this. */
const JOIN_RETRY_MS = 5000;
const MAX_JOIN_CLICKS = 3;
const LAUNCHER_RETRY_MS = 3000;
/**
 * teams-dom.md §0: Teams sometimes moves an anonymous guest out of the light web experience
 * (`lightExperience=false` in the URL), where the guest join does not work; a peer bot restarts
 * the join then. Twice at most, so a meeting that always does it ends in a clear error.
 */
const LIGHT_EXPERIENCE_OFF = /[?&#]lightExperience=false(&|$)/i;
const MAX_RESTARTS = 2;
/**
 * Chromium's error page for this long (a redirect chain has settled by then, and nothing on an
 * error page can move on): the join cannot go on, and waiting for the join timeout helps nobody.
 */
const LOAD_FAILED_MS = 3000;
const SIGNIN_HOST = new RegExp(SIGNIN_URL, "i");

/**
 * Opens the link and walks the anonymous join: launcher, device dialogs (also when they come back
 * after "Join now"), name, camera and mic off, "Join now". Ends at the lobby, in the call, denied,
 * or an error a person can act on; never waits past `timeoutMs`. Throws the signal's reason on abort.
 */
export async function joinMeeting(page: Page, opts: JoinOptions): Promise<JoinOutcome> {
  const navigation = watchNavigation(page);
  try {
    return await walkJoin(page, opts, navigation);
  } finally {
    navigation.dispose();
  }
}

async function walkJoin(page: Page, opts: JoinOptions, navigation: NavigationWatch): Promise<JoinOutcome> {
  const { logger, signal } = opts;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs;
  signal?.throwIfAborted();

  const link = webJoinUrl(opts.url);
  const open = async (): Promise<JoinOutcome | null> => {
    try {
      await page.goto(link, { waitUntil: "domcontentloaded", timeout: Math.min(timeoutMs, 45_000) });
      return null;
    } catch (err) {
      signal?.throwIfAborted();
      logger.warn({ err }, "teams: meeting page did not load");
      return { kind: "error", message: `The meeting page never loaded (${(err as Error).message.split("\n")[0]}); check the link and the network.` };
    }
  };
  const failed = await open();
  if (failed) return failed;

  let restarts = 0;
  let seen = "unknown";
  let sawPrejoin = false;
  let prepared = false;
  let joinClicks = 0;
  let lastJoinClick = 0;
  let lastLauncherClick = 0;
  let loadFailedSince: number | null = null;

  while (Date.now() < deadline) {
    signal?.throwIfAborted();
    const probe = await probePage(page);
    let { screen, signal: fired } = classify(probe);
    const outcome = screen === "in_call" || screen === "lobby" || screen === "denied";
    if (!outcome && restarts < MAX_RESTARTS && LIGHT_EXPERIENCE_OFF.test(probe.url) && !LIGHT_EXPERIENCE_OFF.test(link)) {
      restarts += 1;
      logger.info({ url: probe.url, restart: restarts }, "teams: left the light web experience; restarting the join");
      const failedAgain = await open();
      if (failedAgain) return failedAgain;
      prepared = false;
      joinClicks = 0;
      lastJoinClick = 0;
      lastLauncherClick = 0;
      continue;
    }
    if (screen === "modal") {
      const clicked = await clickFirst(page, ACTION_SELECTORS.modalContinue);
      if (clicked) logger.info({ signal: clicked }, "teams: dismissed the audio/video dialog");
      else {
        // Only the permission hint (teams-dom.md §2) with no button to press: it must not hold the
        // join up. Escape closes it when it is a dialog; the screen behind it is handled as usual.
        await page.keyboard.press("Escape").catch(() => undefined);
        ({ screen, signal: fired } = classify(probe, ["modal"]));
      }
    }
    if (screen !== seen) {
      logger.info({ screen, signal: fired }, "teams: screen");
      seen = screen;
    }
    const blocked = blockedMessage(screen, "join");
    if (blocked) return { kind: "error", message: blocked };

    // A page that never loaded shows nothing to recognise: tell it by the navigation that failed.
    const failedNav = screen === "unknown" ? navigation.failed() : null;
    if (!failedNav) loadFailedSince = null;
    else if (SIGNIN_HOST.test(failedNav.url)) {
      logger.info({ url: failedNav.url, error: failedNav.error }, "teams: redirected to a sign-in page that did not load");
      return { kind: "error", message: blockedMessage("signin", "join") ?? "" };
    } else {
      loadFailedSince ??= Date.now();
      if (Date.now() - loadFailedSince > LOAD_FAILED_MS) {
        logger.warn({ url: failedNav.url, error: failedNav.error }, "teams: the page did not load");
        return { kind: "error", message: `A page Teams sent the bot to did not load (${failedNav.error} at ${new URL(failedNav.url).origin}); check the link and the network.` };
      }
    }

    switch (screen) {
      case "in_call":
      case "lobby":
      case "denied":
        return { kind: screen, signal: fired ?? "" };
      case "prejoin":
        sawPrejoin = true;
        if (!prepared) {
          await fillDisplayName(page, opts.displayName, logger);
          const cameraOff = await turnOff(page, "camera", logger);
          const micOff = await turnOff(page, "mic", logger);
          // A dialog may have covered a switch; go round again and retry everything then.
          prepared = cameraOff && micOff;
          if (!prepared) break;
        }
        if (Date.now() - lastJoinClick > JOIN_RETRY_MS && joinClicks < MAX_JOIN_CLICKS) {
          const clicked = await clickFirst(page, ACTION_SELECTORS.join);
          if (clicked) {
            joinClicks += 1;
            lastJoinClick = Date.now();
            logger.info({ signal: clicked, attempt: joinClicks }, "teams: pressed Join now");
          }
        }
        break;
      case "launcher":
        if (Date.now() - lastLauncherClick > LAUNCHER_RETRY_MS) {
          const clicked = await clickFirst(page, ACTION_SELECTORS.launcher);
          if (clicked) {
            lastLauncherClick = Date.now();
            logger.info({ signal: clicked }, "teams: continue on this browser");
          }
        }
        break;
      default:
        break;
    }
    await pause(STEP_MS, signal);
  }

  const secs = Math.round(timeoutMs / 1000);
  const message =
    joinClicks > 0
      ? `Pressed "Join now" but Teams showed neither the lobby nor the call within ${secs} s (last screen: ${seen}).`
      : sawPrejoin
        ? `The Teams pre-join screen never let the bot press "Join now" within ${secs} s.`
        : `The Teams join page never showed the pre-join screen within ${secs} s (last screen: ${seen}); check the link.`;
  logger.warn({ screen: seen, joinClicks }, "teams: join timed out");
  return { kind: "error", message };
}
