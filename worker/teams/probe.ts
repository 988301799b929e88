import type { Page } from "playwright-core";
import { CHAT_AREAS, END_SCREEN_AREAS, ROSTER_BUTTONS, SCREEN_ALIASES, SCREEN_PRIORITY, SCREEN_SIGNALS, type ScreenName, type Signal } from "./signals.ts";

export interface Probe {
  /** For each screen whose signals fired, the first signal that did (e.g. `css:#hangup-button`). */
  fired: Partial<Record<ScreenName, string>>;
  url: string;
  /** Text of the visible roster badge, null when there is none. */
  badge: string | null;
  /** Visible roster rows, null when the roster panel is closed. */
  rosterRows: number | null;
  /** The visible roster rows' names (aria-label before its first comma, else the text); null when closed. */
  rosterNames: string[] | null;
  /** "You're the only one here" / "Waiting for others to join" is on screen. */
  onlyOne: boolean;
  /** A call control (§7) is in the page, shown or hidden (a screen share hides the toolbar). */
  callInDom: boolean;
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
  // In the viewport and the topmost element at its centre (itself or something inside it).
  const onScreen = (e) => {
    if (!rendered(e)) return false;
    const r = e.getBoundingClientRect();
    const x = Math.min(Math.max(r.left + r.width / 2, 0), innerWidth - 1);
    const y = Math.min(Math.max(r.top + r.height / 2, 0), innerHeight - 1);
    if (r.right <= 0 || r.bottom <= 0 || r.left >= innerWidth || r.top >= innerHeight) return false;
    const top = document.elementFromPoint(x, y);
    return !!top && (top === e || e.contains(top));
  };
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
    // A disabled button is no action offered: the light lobby keeps a disabled "Join now" (2026 facts).
    .filter((b) => !b.disabled && b.getAttribute("aria-disabled") !== "true")
    .map((b) => squash(b.tagName === "INPUT" ? b.value : b.textContent) + "\\n" + squash(b.getAttribute("aria-label")));
  // End, removed and denied texts are read where an end screen says them (signals.ts scope):
  // the whole page but its chat panes once no call control shows, else only headings and panels.
  const callOn = args.callCss.some((c) => Array.from(document.querySelectorAll(c)).some(rendered));
  const chats = Array.from(document.querySelectorAll(args.chatAreas));
  const inChat = (e) => chats.some((c) => c.contains(e));
  let endText = "";
  if (!callOn) {
    endText = body;
    for (const c of chats) {
      const t = flat(c.innerText);
      if (t.trim()) endText = endText.split(t).join("\\n");
    }
  } else {
    endText = Array.from(document.querySelectorAll(args.endAreas)).filter((e) => rendered(e) && !inChat(e)).map((e) => flat(e.innerText)).join("\\n");
  }
  const fired = {};
  for (const [screen, signals] of Object.entries(args.signals)) {
    for (const s of signals) {
      let hit = false;
      let name = "";
      if (s.css) {
        const re = s.text ? new RegExp(s.text, "i") : null;
        const shown = s.onScreen ? onScreen : rendered;
        hit = Array.from(document.querySelectorAll(s.css)).some((e) => shown(e) && (!re || re.test(squash(e.textContent))));
        name = "css:" + s.css + (s.text ? " text:" + s.text : "");
      } else if (s.button) {
        const re = new RegExp(s.button, "im");
        hit = buttons.some((b) => re.test(b));
        name = "button:" + s.button;
      } else if (s.url) {
        hit = new RegExp(s.url, "i").test(location.href);
        name = "url:" + s.url;
      } else if (s.text) {
        hit = new RegExp(s.text, "i").test(s.scope === "end_screen" ? endText : body);
        name = "text:" + s.text;
      }
      if (hit) { fired[screen] = name; break; }
    }
  }
  // The badge counts participants on the People button only: on the chat button it counts messages.
  const onRoster = (b) => {
    const button = b.closest("button, [role=button]");
    if (button) return button.matches(args.rosterButtons);
    const wrap = b.parentElement;
    return !!wrap && !!wrap.querySelector(args.rosterButtons) && wrap.querySelectorAll("button, [role=button]").length === 1;
  };
  const badgeEl = Array.from(document.querySelectorAll('[data-tid="toolbar-item-badge"]')).find((b) => visible(b) && onRoster(b));
  const rows = Array.from(document.querySelectorAll('[data-tid^="participantsInCall-"], [data-cid="roster-participant"][aria-label]')).filter(visible);
  const rosterOpen = Array.from(document.querySelectorAll('[aria-label="People"] [role="tree"], [role="tree"]')).some(visible);
  return {
    fired,
    url: location.href,
    badge: badgeEl ? (badgeEl.textContent || "").trim() : null,
    // §11 names two row forms; the roster-participant one may sit outside a tree, so visible
    // rows count on their own too.
    rosterRows: rosterOpen || rows.length > 0 ? new Set(rows).size : null,
    rosterNames: rosterOpen || rows.length > 0
      ? Array.from(new Set(rows)).map((r) => {
          const label = r.getAttribute("aria-label");
          const name = label ? label.split(",")[0] : (r.textContent || "");
          return name.replace(/\\s+/g, " ").trim();
        })
      : null,
    onlyOne: /you['\u2019]re the only one here|waiting for others to join/i.test(body),
    callInDom: args.inCallCss.some((c) => document.querySelector(c) !== null),
  };
}`;

const EMPTY: Probe = { fired: {}, url: "", badge: null, rosterRows: null, rosterNames: null, onlyOne: false, callInDom: false };

const cssOf = (signals: readonly Signal[]): string[] => signals.flatMap((s) => (s.css ? [s.css] : []));
const SCOPE_ARGS = {
  callCss: [...cssOf(SCREEN_SIGNALS.in_call), ...cssOf(SCREEN_SIGNALS.call_hint)],
  inCallCss: cssOf(SCREEN_SIGNALS.in_call),
  chatAreas: CHAT_AREAS,
  endAreas: END_SCREEN_AREAS,
  rosterButtons: ROSTER_BUTTONS,
};

/**
 * Looks at the page once. A page in the middle of navigating has no context to evaluate in: that
 * probe reports nothing rather than failing; a closed page throws.
 */
export async function probePage(page: Page, signals: Record<string, Signal[]> = SCREEN_SIGNALS): Promise<Probe> {
  if (page.isClosed()) throw new Error("the browser page is closed");
  try {
    return await page.evaluate(`(${PROBE_SCRIPT})(${JSON.stringify({ signals, ...SCOPE_ARGS })})`) as Probe;
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
