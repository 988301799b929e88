import type { ScreenName } from "./signals.ts";

/**
 * Screens that stop a join for good, as messages a person can act on (they reach the session's
 * `error_message`). `stage` says where the bot was, which changes what "ended" means.
 */
export function blockedMessage(screen: ScreenName | "unknown", stage: "join" | "lobby" | "call"): string | null {
  switch (screen) {
    case "signin":
      return "Teams asks for a signed-in account: the organiser's tenant does not allow anonymous join for this meeting.";
    case "captcha":
      return "Teams asked for a captcha (\"Verify you're a real person\"); anonymous join was refused for this browser.";
    case "wrong_link":
      return "Teams says the meeting URL is incorrect; check the link.";
    case "cant_connect":
      return "Teams could not connect the call (\"we couldn't connect you\").";
    // In the lobby and in the call these two are outcomes (waitForAdmission, watchCall), not errors.
    case "ended":
      return stage === "join" ? "The meeting has already ended." : null;
    case "removed":
      return stage === "join" ? "Teams removed the bot before it was admitted." : null;
    default:
      return null;
  }
}
