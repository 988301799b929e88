/**
 * Checks and normalises a Teams join link (teams-dom.md §0) before a browser ever opens it:
 * only http(s), only allow-listed hosts, only the known link forms, so the bot cannot be sent to
 * arbitrary pages.
 */

/** The recall sample's parameters: they take the meetup-join link straight to the web client. */
const MEETUP_JOIN_PARAMS: ReadonlyArray<[string, string]> = [
  ["msLaunch", "false"],
  ["type", "meetup-join"],
  ["directDl", "true"],
  ["enableMobilePage", "true"],
  ["suppressPrompt", "true"],
];

function hostAllowed(url: URL, allowedHosts: string[]): boolean {
  const defaultPort = url.protocol === "https:" ? "443" : "80";
  const host = url.hostname.toLowerCase();
  const port = url.port || defaultPort;
  return allowedHosts.some((raw) => {
    const entry = raw.trim().toLowerCase();
    if (entry === "") return false;
    // An entry without a port allows only the scheme's default port; one naming the default port
    // (`teams.microsoft.com:443`) is the same entry. `[::1]:8000` keeps its brackets in both.
    const m = /^(.*):(\d+)$/.exec(entry);
    return (m ? m[1] : entry) === host && (m ? String(Number(m[2])) : defaultPort) === port;
  });
}

type LinkForm = "meetup-join" | "meet" | "v2";

function linkForm(url: URL): LinkForm | null {
  const path = url.pathname;
  // `{conv}/{msg}` in every real invitation; a link cut after `{conv}` still names the meeting.
  if (/^\/l\/meetup-join\/[^/]+/.test(path)) return "meetup-join";
  if (/^\/meet\/[^/]+\/?$/.test(path)) return "meet";
  // The v2 client keeps the meeting in the fragment: `/v2/?meetingjoin=true#/meet/{id}?p=...`,
  // and the older `/_#/l/meetup-join/...` does the same.
  if (/^\/(v2\/?|_)?$/.test(path) && /^#\/(meet\/[^/?]+|l\/meetup-join\/)/.test(url.hash)) return "v2";
  return null;
}

export function normalizeMeetingUrl(raw: string, allowedHosts: string[]): { url: string } | { error: string } {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return { error: "meeting_url is not a valid URL" };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return { error: "meeting_url must be an http(s) link" };
  }
  if (url.username !== "" || url.password !== "") {
    return { error: "meeting_url must not contain credentials" };
  }
  if (!hostAllowed(url, allowedHosts)) {
    return { error: `meeting_url host ${url.host} is not allowed (allowed: ${allowedHosts.join(", ")})` };
  }
  const form = linkForm(url);
  if (!form) {
    return {
      error: "meeting_url is not a Teams meeting link (expected /l/meetup-join/…, /meet/<id>?p=… or /v2/?meetingjoin=true#/meet/…)",
    };
  }
  return { url: withWebClientParams(url, form).toString() };
}

function withWebClientParams(url: URL, form: LinkForm): URL {
  if (form === "meetup-join") {
    for (const [key, value] of MEETUP_JOIN_PARAMS) {
      if (!url.searchParams.has(key)) url.searchParams.set(key, value);
    }
  }
  return url;
}

/**
 * The address the browser opens for a link the API accepted: the caller's link (which the API
 * stores and echoes as sent) with the web-client parameters of a meetup-join link added.
 */
export function webJoinUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return raw;
  }
  const form = linkForm(url);
  return form ? withWebClientParams(url, form).toString() : url.toString();
}
