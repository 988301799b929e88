import type { ErrorCode } from "../../shared/recording/error-codes.ts";
import type { ScreenName } from "./signals.ts";

/** A join that cannot go on: the closed-list code a program branches on and the sentence a person reads. */
export interface Blocked {
  code: ErrorCode;
  message: string;
}

/**
 * A retry screen (its cancel button) with no text we know for this long is not taken for a
 * denial (issue #15): the join or lobby wait ends in an error that says what Teams showed.
 */
export const RETRY_SCREEN_MS = 5_000;
export const RETRY_SCREEN_MESSAGE = "Teams showed its retry screen without a reason the bot knows (not a denial it can read); the bot was not admitted.";

/**
 * Screens that stop a join for good, as messages a person can act on (they reach the session's
 * `error_message`) with their `error_code` (issue #16). `stage` says where the bot was, which
 * changes what "ended" means.
 */
export function blockedReason(screen: ScreenName | "unknown", stage: "join" | "lobby" | "call"): Blocked | null {
  switch (screen) {
    case "signin":
      return { code: "login_required", message: "Teams asks for a signed-in account: the meeting does not let this anonymous guest in without signing in." };
    case "anon_disabled":
      return { code: "anonymous_join_disabled", message: "The organiser's tenant does not allow anonymous (guest) join for this meeting." };
    case "captcha":
      return { code: "captcha", message: "Teams asked for a captcha (\"Verify you're a real person\"); anonymous join was refused for this browser." };
    case "wrong_passcode":
      return { code: "passcode_incorrect", message: "Teams says the meeting passcode is incorrect; check the p= part of the link." };
    case "wrong_link":
      return { code: "meeting_not_found", message: "Teams says the meeting URL is incorrect; check the link." };
    case "cant_connect":
      return { code: "meeting_unreachable", message: "Teams could not connect the call (\"we couldn't connect you\")." };
    // In the lobby and in the call these two are outcomes (waitForAdmission, watchCall), not errors.
    case "ended":
      return stage === "join" ? { code: "meeting_not_found", message: "The meeting has already ended." } : null;
    case "removed":
      return stage === "join" ? { code: "internal", message: "Teams removed the bot before it was admitted." } : null;
    default:
      return null;
  }
}

/** The sentence alone, for callers that only report it. */
export function blockedMessage(screen: ScreenName | "unknown", stage: "join" | "lobby" | "call"): string | null {
  return blockedReason(screen, stage)?.message ?? null;
}
