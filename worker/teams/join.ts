import type { Page } from "playwright-core";
import type { Logger } from "../../shared/log/logger.ts";
import { scrubUrlSecrets } from "../../shared/log/url-secrets.ts";
import type { ErrorCode } from "../../shared/recording/error-codes.ts";
import type { StepSink } from "../evidence/steps.ts";
import type { ConversationEndWatch } from "./conversation-end.ts";
import { blockedReason, RETRY_SCREEN_MESSAGE, RETRY_SCREEN_MS } from "./messages.ts";
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
  | { kind: "error"; code: ErrorCode; message: string };

export interface JoinOptions {
  url: string;
  displayName: string;
  logger: Logger;
  signal?: AbortSignal;
  /** The whole join, from opening the link to the lobby or the call (JOIN_TIMEOUT_SECONDS). */
  timeoutMs?: number;
  /** The signalling WebSocket's conversationEnd, watched from before the page opens (2026 facts). */
  ends?: ConversationEndWatch;
  /** Every screen entered and action taken, for the session's steps.json (#16). */
  steps?: StepSink;
}

const DEFAULT_TIMEOUT_MS = 120_000;
/** No known page state for this long: `unexpected_page` (#16). */
export const UNKNOWN_PAGE_MS = 30_000;
/** A generic refusal on screen waits this long for the WebSocket to say which refusal it is. */
const FRAME_GRACE_MS = 1500;
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
  const deadline = performance.now() + timeoutMs;
  signal?.throwIfAborted();

  const link = webJoinUrl(opts.url);
  const steps = opts.steps;
  const open = async (): Promise<JoinOutcome | null> => {
    steps?.step("open_link");
    try {
      await page.goto(link, { waitUntil: "domcontentloaded", timeout: Math.min(timeoutMs, 45_000) });
      return null;
    } catch (err) {
      signal?.throwIfAborted();
      logger.warn({ err }, "teams: meeting page did not load");
      // Playwright's message names the link, passcode and all: the message goes to the API and webhooks.
      const detail = scrubUrlSecrets((err as Error).message.split("\n")[0] ?? "");
      opts.steps?.step("page_load_failed", { detail });
      return { kind: "error", code: "meeting_unreachable", message: `The meeting page never loaded (${detail}); check the link and the network.` };
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
  let retrySince: number | null = null;
  let unknownSince = performance.now();
  let blockedSince: number | null = null;

  while (performance.now() < deadline) {
    signal?.throwIfAborted();
    const probe = await probePage(page);
    let { screen, signal: fired } = classify(probe);
    // The signalling WebSocket's end of the conversation outranks the screen: it is Teams' own word.
    const ended = opts.ends?.latest();
    if (ended) {
      steps?.step("conversation_end", { screen, signal: `ws:conversationEnd subCode=${ended.subCode ?? "none"}` });
      if (ended.kind === "denied" || ended.kind === "removed") return { kind: "denied", signal: `ws:conversationEnd:${ended.subCode ?? ""}` };
      if (ended.kind === "anonymous_join_disabled") return { kind: "error", ...blockedReason("anon_disabled", "join")! };
      return { kind: "error", ...blockedReason("ended", "join")! };
    }
    const outcome = screen === "in_call" || screen === "lobby" || screen === "denied";
    if (!outcome && restarts < MAX_RESTARTS && LIGHT_EXPERIENCE_OFF.test(probe.url) && !LIGHT_EXPERIENCE_OFF.test(link)) {
      restarts += 1;
      logger.info({ restart: restarts }, "teams: left the light web experience; restarting the join");
      steps?.step("light_experience_off", { detail: `restart ${restarts}` });
      const failedAgain = await open();
      if (failedAgain) return failedAgain;
      prepared = false;
      unknownSince = performance.now();
      joinClicks = 0;
      lastJoinClick = 0;
      lastLauncherClick = 0;
      continue;
    }
    if (!outcome && LIGHT_EXPERIENCE_OFF.test(probe.url) && !LIGHT_EXPERIENCE_OFF.test(link)) {
      // Sent to the full client again after every restart: no guest join there, and waiting out
      // the unknown page's timeout would only hide why.
      steps?.step("unexpected_page", { screen, signal: "url:lightExperience=false" });
      return {
        kind: "error",
        code: "unexpected_page",
        message: `Teams sent the bot to its full client (lightExperience=false) ${restarts + 1} times; a guest can join only in the light web experience. Try again later.`,
      };
    }
    if (screen === "modal") {
      const clicked = await clickFirst(page, ACTION_SELECTORS.modalContinue);
      if (clicked) {
        logger.info({ signal: clicked }, "teams: dismissed the audio/video dialog");
        steps?.step("modal_dismissed", { screen, signal: clicked });
      }
      else {
        // Only the permission hint (teams-dom.md §2) with no button to press: it must not hold the
        // join up. Escape closes it when it is a dialog; the screen behind it is handled as usual.
        await page.keyboard.press("Escape").catch(() => undefined);
        ({ screen, signal: fired } = classify(probe, ["modal"]));
      }
    }
    if (screen !== seen) {
      logger.info({ screen, signal: fired }, "teams: screen");
      steps?.step("screen", { screen, signal: fired });
      seen = screen;
    }
    if (screen !== "unknown") unknownSince = performance.now();
    const blocked = blockedReason(screen, "join");
    if (blocked) {
      // "We couldn't connect you" may be the screen of a refusal the WebSocket names (5723, 5854).
      blockedSince ??= performance.now();
      if (screen !== "cant_connect" || !opts.ends || performance.now() - blockedSince > FRAME_GRACE_MS) {
        logger.info({ screen, signal: fired, code: blocked.code }, "teams: the join is blocked");
        return { kind: "error", ...blocked };
      }
    } else blockedSince = null;

    // A page that never loaded shows nothing to recognise: tell it by the navigation that failed.
    const failedNav = screen === "unknown" ? navigation.failed() : null;
    if (!failedNav) loadFailedSince = null;
    else if (SIGNIN_HOST.test(failedNav.url)) {
      logger.info({ url: failedNav.url, error: failedNav.error }, "teams: redirected to a sign-in page that did not load");
      steps?.step("signin_redirect", { signal: `url:${new URL(failedNav.url).origin}` });
      return { kind: "error", ...blockedReason("signin", "join")! };
    } else {
      loadFailedSince ??= performance.now();
      if (performance.now() - loadFailedSince > LOAD_FAILED_MS) {
        logger.warn({ url: failedNav.url, error: failedNav.error }, "teams: the page did not load");
        steps?.step("page_load_failed", { detail: `${failedNav.error} at ${new URL(failedNav.url).origin}` });
        return { kind: "error", code: "meeting_unreachable", message: `A page Teams sent the bot to did not load (${failedNav.error} at ${new URL(failedNav.url).origin}); check the link and the network.` };
      }
    }
    if (!failedNav && screen === "unknown" && performance.now() - unknownSince > UNKNOWN_PAGE_MS) {
      logger.warn({ url: probe.url }, "teams: no known page state");
      steps?.step("unexpected_page", { screen });
      return { kind: "error", code: "unexpected_page", message: `Teams showed no page the bot knows for ${Math.round(UNKNOWN_PAGE_MS / 1000)} s; the join cannot go on.` };
    }

    retrySince = screen === "retry_screen" ? (retrySince ?? performance.now()) : null;
    if (retrySince !== null && performance.now() - retrySince > RETRY_SCREEN_MS) {
      logger.warn({ signal: fired }, "teams: a retry screen with no known text");
      return { kind: "error", code: "unexpected_page", message: RETRY_SCREEN_MESSAGE };
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
        if (performance.now() - lastJoinClick > JOIN_RETRY_MS && joinClicks < MAX_JOIN_CLICKS) {
          const clicked = await clickFirst(page, ACTION_SELECTORS.join);
          if (clicked) {
            joinClicks += 1;
            lastJoinClick = performance.now();
            logger.info({ signal: clicked, attempt: joinClicks }, "teams: pressed Join now");
            steps?.step("join_now", { screen, signal: clicked });
          }
        }
        break;
      case "launcher":
        if (performance.now() - lastLauncherClick > LAUNCHER_RETRY_MS) {
          const clicked = await clickFirst(page, ACTION_SELECTORS.launcher);
          if (clicked) {
            lastLauncherClick = performance.now();
            logger.info({ signal: clicked }, "teams: continue on this browser");
            steps?.step("launcher_continue", { screen, signal: clicked });
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
  steps?.step("join_timeout", { screen: seen });
  return { kind: "error", code: "prejoin_stuck", message };
}
