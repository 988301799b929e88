/**
 * A meeting page without CSS animations (issue #20). A bot looks at nobody's screen, yet every
 * running CSS animation (reactions floating up, spinners, pulsing rings) makes Chromium produce
 * and composite 60 frames a second. An init script (every frame, before the page's own scripts)
 * adopts one constructed style sheet that gives every animation zero duration and one
 * iteration: each jumps to its end state at once, and `animationstart`/`animationend` still fire,
 * so page code that waits for them goes on. Nothing else changes: no element is added or removed
 * (a constructed sheet is not in the DOM, and CSP's style-src does not apply to it), classes and
 * attributes stay as the page sets them, so the adapter's data-tid and text checks and the
 * observer's speaking outline (worker/observe/page-script.ts) read what they read before.
 * Transitions are left alone: a zero-duration transition fires no `transitionend`, which page
 * code may wait for, and they run only briefly on a change.
 *
 * Measured with bench/bot/flags-ab.ts (A and B at once, the fixture's realistic meeting):
 * see the commit that added this file.
 */
import type { BrowserContext } from "playwright-core";

/**
 * The tiles' voice-level outline keeps its animations: a client may show speech by animating its
 * ring (teams-dom.md: a blue `::before` ring at opacity 1), and the observer reads that ring when
 * the mix carries no contributing sources. One small element per tile costs next to nothing.
 */
const SPEAKING_OUTLINE = ':not([data-tid="voice-level-stream-outline"])';

export const STILL_PAGE_CSS = `${SPEAKING_OUTLINE}, ${SPEAKING_OUTLINE}::before, ${SPEAKING_OUTLINE}::after { animation-duration: 0s !important; animation-delay: 0s !important; animation-iteration-count: 1 !important; }`;

const STILL_SOURCE = `(css) => {
  if (typeof CSSStyleSheet !== "function" || !document || !("adoptedStyleSheets" in document)) return;
  try {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(css);
    document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
  } catch { /* an old engine: animations keep running, nothing else changes */ }
}`;

/** Installs the sheet in every page and frame of the context from the next navigation on. */
export async function installStillPage(context: BrowserContext): Promise<void> {
  await context.addInitScript({ content: `(${STILL_SOURCE})(${JSON.stringify(STILL_PAGE_CSS)});` });
}
