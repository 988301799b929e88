/**
 * Variants teams-dom.md lists that the fixture does not show: each screen built from only the
 * documented selectors or texts, in a real headless Chromium (static pages, no fixture server).
 * A Teams imitation other than ours may show any one signal alone; the adapter must still tell
 * the screen, and must not let a weak signal override a stronger one.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Page } from "playwright-core";
import { createLogger } from "../../shared/log/logger.ts";
import { classify, joinMeeting, probePage, waitForAdmission } from "../../worker/teams/index.ts";
import { turnOff } from "../../worker/teams/prejoin.ts";
import { staticPages } from "./harness.ts";

const logger = createLogger({ level: process.env.LOG_LEVEL ?? "silent" });
const STYLE = "<style>button,[role=button]{display:inline-block;min-width:40px;min-height:20px}</style>";
const pages = staticPages();
const pageWith = (t: { after: (fn: () => Promise<void>) => void }, html: string): Promise<Page> => pages.open(t, `${STYLE}<div id="app">${html}</div>`);

const SCREENS: [string, string, string][] = [
  ["call view: stage wrapper only (§7)", '<div data-tid="modern-stage-wrapper">stage</div>', "in_call"],
  ["call view: roster and chat buttons only (§7)", '<button id="chat-button">Chat</button><button id="roster-button">People</button>', "in_call"],
  ["call view: raise-hand button only (§7)", '<button id="raisehands-button">Raise</button>', "in_call"],
  ["lobby text wins over call-view hints (§6)", '<p>Waiting to be admitted</p><button id="chat-button">Chat</button>', "lobby"],
  ["lobby: cancel button only (§6)", '<button data-tid="prejoin-cancel-button">Leave</button>', "lobby"],
  ["pre-join with a cancel button is not the lobby (§5)", '<input data-tid="prejoin-display-name-input"><button data-tid="prejoin-join-button">Join now</button><button data-tid="prejoin-cancel-button">Cancel</button>', "prejoin"],
  // Issue #15: a retry screen without a text we know is its own screen, not a denial.
  ["retry-cancel button only is a retry screen, not a denial (§8)", '<button data-tid="calling-retry-cancelbutton">Cancel</button>', "retry_screen"],
  ["removed screen with retry-cancel stays removed (§9)", '<h1 id="calling-retry-screen-title">You have been removed from this meeting</h1><button data-tid="calling-retry-cancelbutton">Dismiss</button>', "removed"],
  ["couldn't-connect with retry-cancel stays an error (§8)", "<h1>Sorry, we couldn\u2019t connect you</h1><button data-tid=\"calling-retry-cancelbutton\">Cancel</button>", "cant_connect"],
  ["launcher: aria-label only (§1)", '<div role="button" aria-label="Join on this browser"></div>', "launcher"],
];

describe("teams-dom.md variants", { timeout: 60_000 }, () => {
  for (const [name, html, expected] of SCREENS) {
    test(name, async (t) => {
      const page = await pageWith(t, html);
      assert.equal(classify(await probePage(page)).screen, expected);
    });
  }

  test("roster rows outside a tree still count (§11)", async (t) => {
    const page = await pageWith(t, '<div data-cid="roster-participant" aria-label="Recorder">Recorder</div><div data-cid="roster-participant" aria-label="Ann">Ann</div>');
    assert.equal((await probePage(page)).rosterRows, 2);
  });

  test("pre-join switches as a native checkbox and a checked=\"true\" switch are turned off (§4)", async (t) => {
    // A clicked checkbox keeps its `checked` attribute: reading the attribute would see it still
    // on, click it back on, and never press "Join now".
    const page = await pageWith(t, `
      <label><input type="checkbox" data-tid="toggle-video" checked> Camera</label>
      <div role="switch" data-tid="toggle-mute" checked="true" onclick="this.setAttribute('checked', this.getAttribute('checked') === 'true' ? 'false' : 'true')">Mic</div>`);
    assert.equal(await turnOff(page, "camera", logger), true);
    assert.equal(await turnOff(page, "mic", logger), true);
    assert.equal(await page.locator('[data-tid="toggle-video"]').isChecked(), false);
    assert.equal(await page.locator('[data-tid="toggle-mute"]').getAttribute("checked"), "false");
    assert.equal(await turnOff(page, "camera", logger), true, "an already-off checkbox is left alone");
    assert.equal(await page.locator('[data-tid="toggle-video"]').isChecked(), false);
  });

  test("icon-only launcher, permission hint without a button: the join still reaches the lobby", async (t) => {
    // §1 launcher known only by its aria-label on a role=button element; §2's "Select Allow…"
    // hint shown on the pre-join screen with nothing to press; §6 a lobby text.
    const page = await pageWith(t, `
      <a role="button" href="#" id="web" aria-label="Continue on this browser"><svg width="20" height="20"></svg></a>
      <script>
        const app = document.getElementById("app");
        document.getElementById("web").onclick = (e) => {
          e.preventDefault();
          app.innerHTML = '<p>Select Allow to let Microsoft Teams use your mic and camera.</p>' +
            '<input id="prejoin-display-name"><button data-tid="prejoin-join-button">Join now</button>';
          app.querySelector("button").onclick = () => {
            window.joinedAs = app.querySelector("input").value;
            app.innerHTML = "<p>You\u2019re in the lobby</p>";
          };
        };
      </script>`);
    const url = `data:text/html;charset=utf-8,${encodeURIComponent(await page.content())}`;
    const outcome = await joinMeeting(page, { url, displayName: "Recorder", logger, timeoutMs: 20_000 });
    assert.equal(outcome.kind, "lobby", JSON.stringify(outcome));
    assert.equal(await page.evaluate("window.joinedAs"), "Recorder");
  });

  test("admitted into a call view known only by §7's weaker elements", async (t) => {
    const page = await pageWith(t, "<p>Someone will let you in shortly</p>");
    const wait = waitForAdmission(page, { timeoutMs: 15_000, logger });
    await page.evaluate(`document.getElementById("app").innerHTML = '<button id="roster-button">People</button><div data-tid="modern-stage-wrapper">stage</div>'`);
    assert.equal(await wait, "admitted");
  });

  for (const [screen, html, expected] of [
    ["removed from the lobby (§9)", '<h1 id="calling-retry-screen-title">You\u2019ve been removed from this meeting</h1>', "denied"],
    ["the meeting ends in the lobby (§10)", '<div data-tid="calling-e2ee-end-screen">This meeting has ended</div>', "meeting_ended"],
  ] as const) {
    test(`${screen}: an outcome of the wait, not an error`, async (t) => {
      const page = await pageWith(t, "<p>Waiting for someone to let you in</p>");
      const wait = waitForAdmission(page, { timeoutMs: 15_000, logger });
      await page.evaluate(`document.getElementById("app").innerHTML = '${html}'`);
      assert.equal(await wait, expected);
    });
  }

  test("a retry screen with no known text in the lobby is an error, not a denial (issue #15)", async (t) => {
    const page = await pageWith(t, "<p>Someone will let you in soon</p>");
    const wait = waitForAdmission(page, { timeoutMs: 15_000, logger });
    await page.evaluate(`document.getElementById("app").innerHTML = '<h1>Something went wrong</h1><button data-tid="calling-retry-cancelbutton">Cancel</button>'`);
    const result = await wait;
    assert.ok(typeof result === "object" && /retry screen/.test(result.error), JSON.stringify(result));
  });
});
