/**
 * What each Teams screen looks like (teams-dom.md §1-13). Several signals per screen: ids and
 * data-tid first, because they survive UI and language changes; visible texts as fallback.
 * The first signal that fires is reported, so the logs tell which one real Teams still honours.
 */

export type ScreenName =
  | "ended"
  | "removed"
  | "denied"
  | "signin"
  | "captcha"
  | "wrong_link"
  | "cant_connect"
  | "in_call"
  | "lobby"
  | "modal"
  | "prejoin"
  | "launcher"
  | "retry_screen"
  | "call_hint"
  | "lobby_hint"
  // #16 / teams-dom.md "2026 facts"
  | "anon_disabled"
  | "wrong_passcode"
  | "loading";

/**
 * One signal. `css`: a visible element matches (and, with `text`, its own text matches);
 * `text` alone: the page's visible text matches; `button`: a visible button or menu item whose text
 * or aria-label matches; `url`: the page URL matches. Regexes are sources, matched case-insensitively.
 */
export interface Signal {
  css?: string;
  text?: string;
  button?: string;
  url?: string;
  /**
   * `end_screen` (a `text` signal of the end, removed and denied screens): read only where an end
   * screen would say it — the whole page once no call control is on screen, and while the call
   * view is still there only its headings, dialogs, alerts and end/retry panels; never inside a
   * chat or message list (a chat line "call ended" must not end the meeting: issue #15).
   */
  scope?: "end_screen";
  /**
   * A `css` signal that counts only when its element is on screen: inside the viewport and on top
   * at its centre. For markers a page may keep mounted out of sight once they no longer apply.
   */
  onScreen?: boolean;
}

const APOS = "['\u2019]";

/** Microsoft's sign-in hosts, where Teams redirects a guest a meeting needs an account from (§8). */
export const SIGNIN_URL = "^https://login\\.(microsoftonline|live|microsoft)\\.com/";

export const SCREEN_SIGNALS: Record<ScreenName, Signal[]> = {
  ended: [
    { css: '[data-tid="calling-e2ee-end-screen"]' },
    { css: '[data-tid="anon-meeting-end-screen-rejoin-button"]' },
    { url: "/(postmeeting|meetingended)|calling/end" },
    { css: '[data-tid="anon-meeting-end-screen-rejoin-button"]' },
    { text: "(the|this) meeting has ended|\\bcall ended\\b|you left the meeting", scope: "end_screen" },
  ],
  removed: [
    { css: "#calling-retry-screen-title", text: "removed" },
    { text: `you${APOS}ve been removed from this meeting|you have been removed from this meeting|removed from the meeting`, scope: "end_screen" },
  ],
  denied: [{ text: "denied access to the meeting|your request to join was declined", scope: "end_screen" }],
  // §8: the retry screen's cancel button, without a text we know. Ranked below the removed screen
  // (which shows it too) and the blocked texts. Not a denial by itself (issue #15): the adapter
  // calls it an error once it stays (messages.ts RETRY_SCREEN_MS).
  retry_screen: [{ css: '[data-tid="calling-retry-cancelbutton"]' }],
  signin: [
    { text: "you need to be signed in to an account|we need to verify your info before you can join" },
    { css: 'input[name="loginfmt"]' },
    { url: SIGNIN_URL },
  ],
  captcha: [{ css: '[data-tid="HIP-Captcha-Image"]' }, { text: `verify you${APOS}re a real person` }],
  // 2026 facts: tenant policy refusing guests (also told by conversationEnd subCode 5723).
  anon_disabled: [
    {
      text:
        "external participants are not permitted to join|anonymous (users|participants|join)[^\\n]{0,40}(not (allowed|permitted|enabled)|disabled|blocked)|" +
        `doesn${APOS}t allow anonymous|does not allow anonymous`,
    },
  ],
  wrong_passcode: [
    { css: '[data-tid="passcode-error"]' },
    { text: "passcode (is |was )?(incorrect|wrong|invalid|not valid)|(incorrect|wrong|invalid) (meeting )?passcode|meeting id or passcode" },
  ],
  wrong_link: [{ text: "looks like the meeting url is incorrect" }],
  cant_connect: [{ text: `we couldn${APOS}t connect you` }],
  in_call: [
    { css: "#hangup-button" },
    // 2026 facts: the light meeting's Leave.
    { css: 'button[data-tid="call-end"]' },
    { css: 'button[data-tid="hangup-main-btn"]' },
    { css: '[data-inp="hangup-button"]' },
    { css: '[data-tid="calling-toolbar"]' },
    { css: "#callingButtons-showMoreBtn" },
    { css: 'button[aria-label="Leave"]' },
    // 2026 facts: the German light meeting's Leave.
    { css: 'button[aria-label="Verlassen"], button[aria-label="Auflegen"]' },
  ],
  // §7's other call-view elements. A pre-join or lobby page may carry some of them too, so they
  // count only when no lobby, dialog, pre-join or launcher signal fires (lowest precedence).
  call_hint: [
    { css: '[data-tid="modern-stage-wrapper"]' },
    { css: "#roster-button" },
    { css: "#chat-button" },
    { css: "#raisehands-button" },
    // The stage's tiles and captions (2026 facts): still there while a screen share hides the toolbar.
    { css: '[data-stream-type="Video"]' },
    { css: '[data-tid="participant-info-nametag"]' },
    { css: '[data-tid="closed-caption-renderer-wrapper"]' },
    // A Leave button known by its text alone (English, or the German light page's two words).
    { button: "^(leave|verlassen|auflegen)$" },
  ],
  // §6's lobby cancel button, for a lobby whose text we do not know; below the pre-join screen
  // so a pre-join page with a cancel button is never taken for the lobby.
  // 2026 facts: the light lobby keeps a disabled "Join now" (with no name field beside it, which
  // would make it the pre-join screen: that one ranks higher).
  lobby_hint: [
    { css: '[data-tid="prejoin-cancel-button"]' },
    // On screen only: a page may keep its old pre-join form mounted, off-screen or under the stage,
    // after the admission, and the call must not wait on a button nobody sees.
    { css: '[data-tid="prejoin-join-button"][disabled], [data-tid="prejoin-join-button"][aria-disabled="true"]', onScreen: true },
  ],
  lobby: [
    {
      text:
        "someone will let you in (soon|shortly|when the meeting starts)|someone in the meeting should let you in soon|" +
        `waiting to be admitted|waiting for someone to let you in|your request to join has been sent|you${APOS}re in the lobby|` +
        // 2026 facts: the German light lobby.
        "du wirst gleich hereingebeten|du befindest dich im wartebereich",
    },
  ],
  modal: [
    { button: "continue without audio or video" },
    // 2026 facts: the light page follows the browser's locale; the browser is pinned to English,
    // but a page that renders German anyway must not stop the join at its dialog.
    { button: "ohne audio oder video fortfahren" },
    { text: "select allow to let microsoft teams use your mic and camera" },
    // 2026 facts: the dialog after "Join now", known by its question when its button reads otherwise.
    { css: '[role="dialog"], [role="alertdialog"], dialog[open]', text: `are you sure you don${APOS}t want (to use )?audio or video` },
  ],
  prejoin: [
    { css: '[data-tid="prejoin-join-button"]:not([disabled]):not([aria-disabled="true"])' },
    { css: '[data-tid="prejoin-display-name-input"]' },
    { css: "#prejoin-display-name" },
    { css: 'input[placeholder="Type your name"]' },
    { button: "^join now$" },
  ],
  launcher: [
    { css: 'button[data-tid="joinOnWeb"]' },
    // Not anchored: an imitation may put a subtitle ("No download required") or an icon's title
    // in the same button; only buttons and links are read, so a sentence elsewhere cannot fire.
    { button: "continue on this browser|join (meeting )?(from|on) this browser|join from browser" },
  ],
  // 2026 facts: the light page's loading screen. A known state (not `unknown`), never an outcome;
  // its empty DOM before that stays unknown, so an empty page still ends `unexpected_page`.
  loading: [{ css: "#loading-screen" }],
};

/** Order of precedence when several screens' signals fire at once: outcomes before progress. */
export const SCREEN_PRIORITY: readonly ScreenName[] = [
  "ended",
  "removed",
  "denied",
  "signin",
  "anon_disabled",
  "captcha",
  "wrong_passcode",
  "wrong_link",
  "cant_connect",
  "retry_screen",
  // A lobby text says the bot is not admitted yet, whatever call controls the lobby page shows
  // beside it (a Leave button, a toolbar): the lobby wins, or the bot would count as admitted.
  "lobby",
  "in_call",
  "modal",
  "prejoin",
  "launcher",
  "lobby_hint",
  "call_hint",
  "loading",
];

/** The weaker screens report as the screen they stand for. */
export const SCREEN_ALIASES: Partial<Record<ScreenName, ScreenName>> = { call_hint: "in_call", lobby_hint: "lobby" };

/**
 * Where the end screens' texts are never read: chat and message lists (teams-dom.md has no
 * selector for them; these are the usual roles, ids and data-tids of such panes).
 */
export const CHAT_AREAS = [
  '[role="log"]',
  '[role="feed"]',
  '[data-tid*="chat" i]',
  '[data-tid*="message" i]',
  '[id*="chat" i]:not(button)',
  '[aria-label*="chat" i]',
  '[aria-label*="message" i]',
].join(", ");

/** Where an end screen's text may sit while the call view is still on the page. */
export const END_SCREEN_AREAS = [
  "h1",
  "h2",
  "h3",
  '[role="heading"]',
  '[role="dialog"]',
  '[role="alertdialog"]',
  '[role="alert"]',
  "#calling-retry-screen-title",
  '[data-tid*="end-screen" i]',
  '[data-tid*="retry" i]',
].join(", ");

/** The People button, whose badge alone counts participants (issue #15: not the chat's unread badge). */
export const ROSTER_BUTTONS = [
  "#roster-button",
  '[data-tid*="roster" i]',
  '[data-tid*="people" i]',
  '[aria-label^="People" i]',
  '[aria-label*="participants" i]',
].join(", ");

/** Element candidates for the adapter's actions, best first. */
export const ACTION_SELECTORS = {
  // §1: by data-tid, then each aria-label and text it lists; role=button also finds a link or div
  // styled as a button (its accessible name is the aria-label or the text).
  // A link styled as a button counts too (the probe reads links for the launcher's texts).
  launcher: [
    'button[data-tid="joinOnWeb"]',
    'button[aria-label="Join meeting from this browser"]',
    'button[aria-label="Continue on this browser"]',
    'button[aria-label="Join on this browser"]',
    'button:has-text("Continue on this browser")',
    'button:has-text("Join on this browser")',
    'button:has-text("Join from browser")',
    'role=button[name="Join meeting from this browser"]',
    'role=button[name="Continue on this browser"]',
    'role=button[name="Join on this browser"]',
    'role=button[name="Join from browser"]',
    'a[href]:has-text("Continue on this browser")',
    'a[href]:has-text("Join on this browser")',
    'a[href]:has-text("Join from browser")',
    'a[href]:has-text("Join meeting from this browser")',
  ],
  modalContinue: [
    'button:has-text("Continue without audio or video")',
    'role=button[name="Continue without audio or video"]',
    'button:has-text("Ohne Audio oder Video fortfahren")',
    // The same dialog with a shorter button ("Continue", "Continue without"), inside the dialog only.
    '[role="dialog"] button:has-text("Continue")',
    '[role="alertdialog"] button:has-text("Continue")',
  ],
  nameInput: ['[data-tid="prejoin-display-name-input"]', "#prejoin-display-name", 'input[placeholder="Type your name"]'],
  camera: ['[data-tid="toggle-video"]', 'button[aria-label="Turn camera off"]'],
  mic: ['[data-tid="toggle-mute"]', 'button[aria-label="Mute mic"]'],
  join: ['[data-tid="prejoin-join-button"]', 'button:has-text("Join now")', 'role=button[name="Join now"]'],
  lobbyCancel: ['[data-tid="prejoin-cancel-button"]'],
  hangup: [
    "#hangup-button",
    'button[data-tid="hangup-main-btn"]',
    'button[data-tid="call-end"]',
    '[data-inp="hangup-button"]',
    'button[aria-label="Leave"]',
    'button[aria-label="Verlassen"]',
    'button[aria-label="Auflegen"]',
    // The same buttons known by their text alone (no id, data-tid or aria-label): exact texts,
    // so "Leave chat" or a sentence never matches.
    'button:text-is("Leave")',
    'button:text-is("Verlassen")',
    'button:text-is("Auflegen")',
    'role=button[name=/^(leave|verlassen|auflegen)$/i]',
  ],
  micButton: ["#microphone-button", '[data-tid="microphone-button"]', 'button[aria-label^="Unmute"]', 'button[aria-label^="Mute"]'],
  more: ["#callingButtons-showMoreBtn", 'button[aria-label="More"]', 'button[aria-label="More actions"]'],
  roster: ["#roster-button", 'button[aria-label="People"]', 'button[aria-label^="Show participants"]'],
} as const;
