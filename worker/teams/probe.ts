import type { Page } from "playwright-core";
import { SCREEN_ALIASES, SCREEN_PRIORITY, SCREEN_SIGNALS, type ScreenName, type Signal } from "./signals.ts";

export interface Probe {
  /** For each screen whose signals fired, the first signal that did (e.g. `css:#hangup-button`). */
  fired: Partial<Record<ScreenName, string>>;
  url: string;
  /** Text of the visible roster badge, null when there is none. */
  badge: string | null;
  /** Visible roster rows, null when the roster panel is closed. */
  rosterRows: number | null;
  /** "You're the only one here" / "Waiting for others to join" is on screen. */
  onlyOne: boolean;
}

export interface Screen {
  screen: ScreenName | "unknown";
  signal: string | null;
}

// One round-trip per probe, as a string: functions handed to page.evaluate from tsx may carry
// esbuild's `__name` helper, which does not exist in the page.
const PROBE_SCRIPT = `(args) => {
  const visible = (e) => {
    const r = e.getBoundingClientRect();
    const s = getComputedStyle(e);
    return r.width > 0 && r.height > 0 && s.visibility !== "hidden" && s.display !== "none";
  };
  // A marker element (a captcha image that has not loaded, an empty end screen or stage) may have
  // no size of its own yet still be on screen: rendered is enough for a css signal.
  const rendered = (e) => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== "hidden";
  // No-break spaces and runs of blanks read as one space; in the page's text line breaks stay, so
  // a text signal never matches across two separate blocks. An element's own text is one line.
  const flat = (t) => (t || "").replace(/[^\\S\\n]+/g, " ");
  const squash = (t) => (t || "").replace(/\\s+/g, " ").trim();
  const body = flat(document.body ? document.body.innerText : "");
  // Links too: a launcher written as a link styled as a button (teams-dom.md §1 names only texts);
  // and form buttons, whose text is their value.
  const buttons = Array.from(document.querySelectorAll(
    "button, input[type=button], input[type=submit], a[href], [role=button], [role=link], [role=menuitem]",
  )).filter(visible)
    .map((b) => squash(b.tagName === "INPUT" ? b.value : b.textContent) + "\\n" + squash(b.getAttribute("aria-label")));
  const fired = {};
  for (const [screen, signals] of Object.entries(args.signals)) {
    for (const s of signals) {
      let hit = false;
      let name = "";
      if (s.css) {
        const re = s.text ? new RegExp(s.text, "i") : null;
        hit = Array.from(document.querySelectorAll(s.css)).some((e) => rendered(e) && (!re || re.test(squash(e.textContent))));
        name = "css:" + s.css + (s.text ? " text:" + s.text : "");
      } else if (s.button) {
        const re = new RegExp(s.button, "im");
        hit = buttons.some((b) => re.test(b));
        name = "button:" + s.button;
      } else if (s.url) {
        hit = new RegExp(s.url, "i").test(location.href);
        name = "url:" + s.url;
      } else if (s.text) {
        hit = new RegExp(s.text, "i").test(body);
        name = "text:" + s.text;
      }
      if (hit) { fired[screen] = name; break; }
    }
  }
  const badgeEl = Array.from(document.querySelectorAll('span[data-tid="toolbar-item-badge"]')).find(visible);
  const rows = Array.from(document.querySelectorAll('[data-tid^="participantsInCall-"], [data-cid="roster-participant"][aria-label]')).filter(visible);
  const rosterOpen = Array.from(document.querySelectorAll('[aria-label="People"] [role="tree"], [role="tree"]')).some(visible);
  return {
    fired,
    url: location.href,
    badge: badgeEl ? (badgeEl.textContent || "").trim() : null,
    // §11 names two row forms; the roster-participant one may sit outside a tree, so visible
    // rows count on their own too.
    rosterRows: rosterOpen || rows.length > 0 ? new Set(rows).size : null,
    onlyOne: /you['\u2019]re the only one here|waiting for others to join/i.test(body),
  };
}`;

const EMPTY: Probe = { fired: {}, url: "", badge: null, rosterRows: null, onlyOne: false };

/**
 * Looks at the page once. A page in the middle of navigating has no context to evaluate in: that
 * probe reports nothing rather than failing; a closed page throws.
 */
export async function probePage(page: Page, signals: Record<string, Signal[]> = SCREEN_SIGNALS): Promise<Probe> {
  if (page.isClosed()) throw new Error("the browser page is closed");
  try {
    return await page.evaluate(`(${PROBE_SCRIPT})(${JSON.stringify({ signals })})`) as Probe;
  } catch (err) {
    if (page.isClosed()) throw new Error("the browser page is closed", { cause: err });
    return { ...EMPTY, url: page.url() };
  }
}

/**
 * The screen the page shows, by precedence, with the signal that told. A weaker screen reports as
 * the one it stands for (SCREEN_ALIASES); `skip` leaves screens out (a dialog nobody can dismiss).
 */
export function classify(probe: Probe, skip: readonly ScreenName[] = []): Screen {
  for (const screen of SCREEN_PRIORITY) {
    const signal = probe.fired[screen];
    if (signal && !skip.includes(screen)) return { screen: SCREEN_ALIASES[screen] ?? screen, signal };
  }
  return { screen: "unknown", signal: null };
}

/** Parses the badge's participant count ("3", "3 participants"); null when not a number. */
export function badgeCount(badge: string | null): number | null {
  const m = badge ? /\d+/.exec(badge) : null;
  return m ? Number(m[0]) : null;
}
