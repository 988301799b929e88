/**
 * Issue #15 "End signals scoped to what they mean", on static pages in one headless Chromium:
 * end, removed and denied texts count on end screens, not in a chat line beside the call; the
 * participant badge counts on the People button only; a call whose toolbar a screen share hides
 * is still a call while other in-call signals hold; a retry screen with no known text is not a
 * denial.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createLogger } from "../../shared/log/logger.ts";
import { classify, probePage, watchCall } from "../../worker/teams/index.ts";
import { staticPages } from "./harness.ts";

const logger = createLogger({ level: process.env.LOG_LEVEL ?? "silent" });
const pages = staticPages();
const open = (t: { after: (fn: () => Promise<void>) => void }, html: string) => pages.open(t, `<!doctype html><body><div id="app">${html}</div></body>`);

const TOOLBAR = '<div data-tid="calling-toolbar"><button id="chat-button" aria-label="Chat">Chat</button><button id="roster-button" aria-label="People">People</button><button id="hangup-button" aria-label="Leave">Leave</button></div>';
const STAGE = '<div data-tid="modern-stage-wrapper"><div data-stream-type="Video" data-tid="Ada"><span data-tid="participant-info-nametag">Ada</span></div></div>';

const CASES: [string, string, string][] = [
  ["a chat message 'call ended' beside the call", `${TOOLBAR}${STAGE}<div data-tid="chat-pane"><div data-tid="chat-pane-message"><p>Call ended</p></div></div>`, "in_call"],
  ["a chat line 'the meeting has ended' in a log pane, no data-tid", `${TOOLBAR}<div role="log"><div>Bob: the meeting has ended for me, rejoining</div></div>`, "in_call"],
  ["a paragraph (not a heading) 'You left the meeting' beside the call", `${TOOLBAR}<section><p>Alice: you left the meeting?</p></section>`, "in_call"],
  ["a chat message quoting a denial beside the call", `${TOOLBAR}<ul aria-label="Chat messages"><li>Your request to join was declined lol</li></ul>`, "in_call"],
  ["the same 'call ended' as the end screen's heading, the call gone", "<h1>Call ended</h1><p>Thanks for joining</p>", "ended"],
  ["a removal heading over the call view still counts", `<h2>You\u2019ve been removed from this meeting</h2>${TOOLBAR}`, "removed"],
  ["a removal alert over the call view", `${TOOLBAR}<div role="alert">You have been removed from this meeting</div>`, "removed"],
  ["an end screen whose chat pane still shows 'call ended' lines", '<div data-tid="chat-pane"><p>call ended</p></div><h1>This meeting has ended</h1>', "ended"],
  ["toolbar hidden by a screen share, the stage still there", `<div style="display:none">${TOOLBAR}</div>${STAGE}`, "in_call"],
  ["a retry screen with a text we do not know", '<h1>We\u2019re having trouble</h1><button data-tid="calling-retry-cancelbutton">Cancel</button>', "retry_screen"],
];

describe("end signals scoped to what they mean (issue #15)", { timeout: 120_000, concurrency: 4 }, () => {
  for (const [name, html, expected] of CASES) {
    test(name, async (t) => {
      const probe = await probePage(await open(t, html));
      assert.equal(classify(probe).screen, expected, JSON.stringify(probe.fired));
    });
  }

  test("the badge counts on the People button only, not on the chat button", async (t) => {
    const chatBadge = '<button id="chat-button" aria-label="Chat">Chat<span data-tid="toolbar-item-badge">12</span></button>';
    const page = await open(t, `<div data-tid="calling-toolbar">${chatBadge}<button id="roster-button" aria-label="People">People</button><button id="hangup-button">Leave</button></div>`);
    assert.equal((await probePage(page)).badge, null, "the chat's unread count is not a participant count");
    await page.evaluate(`document.getElementById("roster-button").insertAdjacentHTML("beforeend", '<span data-tid="toolbar-item-badge">4</span>')`);
    assert.equal((await probePage(page)).badge, "4");
  });

  test("a call stays a call through a chat 'call ended' and a hidden toolbar; it ends on the end screen", async (t) => {
    const page = await open(t, `<div id="bar">${TOOLBAR}</div>${STAGE}`);
    await page.evaluate(`document.getElementById("roster-button").insertAdjacentHTML("beforeend", '<span data-tid="toolbar-item-badge">3</span>')`);
    const watch = watchCall(page, { logger, intervalMs: 200 });
    let settled = false;
    void watch.then(() => (settled = true));
    await page.evaluate(`document.getElementById("app").insertAdjacentHTML("beforeend", '<div data-tid="chat-pane-message">call ended</div>')`);
    await page.evaluate(`document.getElementById("bar").style.display = "none"`);
    await new Promise((r) => setTimeout(r, 2_000));
    assert.equal(settled, false, "the watch ended on a chat line or a hidden toolbar");
    await page.evaluate(`document.getElementById("app").innerHTML = '<div data-tid="calling-e2ee-end-screen"><h1>Call ended</h1></div>'`);
    assert.equal(await watch, "meeting_ended");
  });
});
