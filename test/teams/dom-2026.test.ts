/**
 * teams-dom.md "2026 facts", each signal alone on a static page in real headless Chromium: what an
 * imitation other than ours may show. Data-tids first, texts as fallback (#16).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createLogger } from "../../shared/log/logger.ts";
import { classify, leaveMeeting, probePage, waitForAdmission } from "../../worker/teams/index.ts";
import { clickFirst } from "../../worker/teams/page-actions.ts";
import { ACTION_SELECTORS } from "../../worker/teams/signals.ts";
import { staticPages } from "./harness.ts";

const STYLE = "<style>button,[role=button]{display:inline-block;min-width:40px;min-height:20px}</style>";
const pages = staticPages();
const logger = createLogger({ level: process.env.LOG_LEVEL ?? "silent" });

const SCREENS: [string, string, string][] = [
  ["call view: call-end only", '<button data-tid="call-end" aria-label="Leave (Ctrl+Shift+H)">Leave</button>', "in_call"],
  ["lobby: a disabled Join now with no name field", '<p>Bitte warten</p><button data-tid="prejoin-join-button" disabled>Join now</button>', "lobby"],
  ["pre-join: a name field beside a disabled Join now", '<input data-tid="prejoin-display-name-input"><button data-tid="prejoin-join-button" disabled>Join now</button>', "prejoin"],
  ["call view: a German Leave known by its text alone", "<button>Verlassen</button>", "in_call"],
  ["loading screen", '<div id="loading-screen"></div>', "loading"],
  ["ended: the anonymous end screen's rejoin button", '<button data-tid="anon-meeting-end-screen-rejoin-button">Rejoin</button>', "ended"],
  ["sign-in: verify your info", "<p>We need to verify your info before you can join</p>", "signin"],
  ["tenant refuses guests", "<p>External participants are not permitted to join before the event begins.</p>", "anon_disabled"],
  ["anonymous join not allowed", "<p>Anonymous users are not allowed to join this meeting.</p>", "anon_disabled"],
  ["wrong passcode", "<h1>This meeting passcode is incorrect.</h1>", "wrong_passcode"],
  ["wrong passcode beats a wrong URL", "<h1>Looks like the meeting URL is incorrect.</h1><p>The passcode was incorrect.</p>", "wrong_passcode"],
  ["the dialog after Join now by its question, Join now behind it",
    '<button data-tid="prejoin-join-button">Join now</button><div role="dialog" aria-modal="true"><h2>Are you sure you don\u2019t want audio or video?</h2><button>Continue</button></div>', "modal"],
];

describe("2026 variants", { timeout: 60_000 }, () => {
  for (const [name, html, expected] of SCREENS) {
    test(name, async (t) => {
      const page = await pages.open(t, `${STYLE}<div id="app">${html}</div>`);
      assert.equal(classify(await probePage(page)).screen, expected);
    });
  }

  test("the dialog's short Continue button is found inside the dialog only", async (t) => {
    const page = await pages.open(t, `${STYLE}<button onclick="document.title='wrong'">Continue</button><div role="dialog"><p>Are you sure you don't want audio or video?</p><button onclick="document.title='dialog'">Continue</button></div>`);
    assert.equal(await clickFirst(page, ACTION_SELECTORS.modalContinue), '[role="dialog"] button:has-text("Continue")');
    assert.equal(await page.title(), "dialog");
  });

  test("a click a transparent shroud swallows is pressed through the keyboard; never through a dialog", async (t) => {
    const shroud = '<div style="position:fixed;inset:0;z-index:9"></div>';
    const page = await pages.open(t, `${STYLE}<button data-tid="prejoin-join-button" onclick="document.title='joined'">Join now</button>${shroud}`);
    assert.equal(await clickFirst(page, ACTION_SELECTORS.join), '[data-tid="prejoin-join-button"] (keyboard)');
    assert.equal(await page.title(), "joined");
    const modal = await pages.open(t, `${STYLE}<button data-tid="prejoin-join-button" onclick="document.title='joined'">Join now</button><div role="dialog" aria-modal="true" style="position:fixed;inset:0;z-index:9;background:#fff8">x</div>`);
    assert.equal(await clickFirst(modal, ACTION_SELECTORS.join), null);
    assert.notEqual(await modal.title(), "joined");
  });

  test("admitted while the old pre-join form stays mounted out of sight: off-screen, or under the stage", async (t) => {
    for (const hide of ["position:absolute;left:-5000px", "position:absolute;top:0;left:0"]) {
      const page = await pages.open(t, `${STYLE}<div id="app"><p>Someone will let you in soon</p><button data-tid="prejoin-join-button" disabled>Join now</button></div>`);
      const wait = waitForAdmission(page, { timeoutMs: 10_000, logger });
      const stage = '<div data-tid="modern-stage-wrapper" style="position:absolute;inset:0;z-index:5;background:#222"></div>';
      await page.evaluate(`document.getElementById("app").innerHTML = '<div style="${hide}"><button data-tid="prejoin-join-button" disabled>Join now</button></div>${stage}<button data-tid="call-end" style="position:relative;z-index:6">Leave</button>'`);
      assert.equal(await wait, "admitted", hide);
    }
  });

  test("the admission is when the call view began to show, not when a slow page dropped its lobby marker", async (t) => {
    const page = await pages.open(t, `${STYLE}<div id="app"><p>Someone will let you in soon</p><button data-tid="prejoin-join-button" disabled>Join now</button></div>`);
    let callView: number | null = null;
    const wait = waitForAdmission(page, { timeoutMs: 15_000, logger, onCallView: (at) => (callView = at) });
    await new Promise((r) => setTimeout(r, 1000));
    const shown = performance.now();
    // The call view, with the lobby's disabled Join now still on screen for 2.5 s.
    await page.evaluate(`document.getElementById("app").innerHTML = '<button data-tid="prejoin-join-button" disabled>Join now</button><button data-tid="call-end">Leave</button>'`);
    await new Promise((r) => setTimeout(r, 2500));
    await page.evaluate(`document.querySelector('[data-tid="prejoin-join-button"]').remove()`);
    assert.equal(await wait, "admitted");
    const admitted = performance.now();
    assert.ok(callView !== null, "told");
    assert.ok(callView >= shown - 50 && callView <= shown + 1200, `call view seen ${(callView - shown).toFixed(0)} ms after it showed (admitted ${(admitted - shown).toFixed(0)} ms after)`);
  });

  test("a disabled Join now in sight beside a Leave button is still the lobby", async (t) => {
    const page = await pages.open(t, `${STYLE}<div id="app"><button data-tid="prejoin-join-button" disabled>Join now</button><button data-tid="call-end">Leave</button></div>`);
    assert.equal(await waitForAdmission(page, { timeoutMs: 2_000, logger }), "timeout");
  });

  for (const text of ["Verlassen", "Auflegen", "Leave"]) {
    test(`leaves through a "${text}" button known by its text alone`, async (t) => {
      const page = await pages.open(t, `${STYLE}<div id="app"><button id="roster-button" aria-label="People">P</button><button onclick="document.getElementById('app').innerHTML = '<p>left</p>'">${text}</button></div>`);
      const left = await leaveMeeting(page, logger);
      assert.equal(left.ok, true, JSON.stringify(left));
      assert.equal(await page.locator("#app").innerText(), "left");
    });
  }
});
