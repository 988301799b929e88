/**
 * Every outcome text and element of teams-dom.md §1, §5-§11, each on a small static page of the
 * kind an outside Teams imitation might write (a heading, a paragraph, a button with an icon or a
 * subtitle, a typographic apostrophe), in one headless Chromium without the rest of the product.
 * The end-to-end paths through the API are in test/bot/alt-outcomes.test.ts; this file covers the
 * recognition of each variant, which the full path would only repeat more slowly.
 */
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { once } from "node:events";
import { describe, test } from "node:test";
import type { Page } from "playwright-core";
import { createLogger } from "../../shared/log/logger.ts";
import { classify, joinMeeting, probePage, waitForAdmission, watchCall } from "../../worker/teams/index.ts";
import { staticPages } from "./harness.ts";

const logger = createLogger({ level: process.env.LOG_LEVEL ?? "silent" });
const pages = staticPages();
const pageWith = (t: { after: (fn: () => Promise<void>) => void }, html: string): Promise<Page> => pages.open(t, `<!doctype html><body><div id="app">${html}</div></body>`);

const dataUrl = (html: string) => `data:text/html;charset=utf-8,${encodeURIComponent(`<!doctype html><body><div id="app">${html}</div></body>`)}`;

const CALL = '<button id="hangup-button" aria-label="Leave">Leave</button>';

const SCREENS: [string, string, string][] = [
  // §1 launcher, by each aria-label and text, also with an icon, a subtitle or as a link.
  ["launcher: data-tid", '<button data-tid="joinOnWeb"><svg width="16" height="16"></svg></button>', "launcher"],
  ["launcher: aria-label Join meeting from this browser", '<button aria-label="Join meeting from this browser"><svg width="16" height="16"></svg></button>', "launcher"],
  ["launcher: aria-label Continue on this browser", '<button aria-label="Continue on this browser">Web</button>', "launcher"],
  ["launcher: aria-label Join on this browser", '<button aria-label="Join on this browser">Web</button>', "launcher"],
  ["launcher: text Continue on this browser with a subtitle", "<button><span>Continue on this browser</span><span>No download or installation required.</span></button>", "launcher"],
  ["launcher: text Join from browser in nested spans", "<button><svg width='16' height='16'></svg> <span>Join</span> <span>from browser</span></button>", "launcher"],
  ["launcher: text Continue on this browser on a link", '<a href="#web">Continue on this browser</a>', "launcher"],
  // §5 and §8 blocked joins.
  ["sign-in: loginfmt only", '<form><input type="email" name="loginfmt" placeholder="Email, phone, or Skype"></form>', "signin"],
  ["sign-in: text only", "<p>To join this Teams meeting, you need to be signed in to an account.</p>", "signin"],
  ["captcha: image only, no size of its own", '<img data-tid="HIP-Captcha-Image" alt="">', "captcha"],
  ["captcha: text only, typographic apostrophe", "<h2>Verify you\u2019re a real person</h2>", "captcha"],
  ["wrong link", "<h1>Looks like the meeting URL is incorrect.</h1>", "wrong_link"],
  ["couldn't connect, capitalised", "<h1>Sorry, We couldn't connect you</h1>", "cant_connect"],
  // §6 lobby texts.
  ["lobby: soon", "<p>Someone will let you in soon</p>", "lobby"],
  ["lobby: shortly", "<p>Someone will let you in shortly.</p>", "lobby"],
  ["lobby: Hi, name, when the meeting starts", "<p>Hi, Alt Bot. Someone will let you in when the meeting starts.</p>", "lobby"],
  ["lobby: someone in the meeting", "<p>Someone in the meeting should let you in soon</p>", "lobby"],
  ["lobby: waiting to be admitted", "<p>Waiting to be admitted</p>", "lobby"],
  ["lobby: waiting for someone", "<p>Waiting for someone to let you in</p>", "lobby"],
  ["lobby: request sent", "<h2>Your request to join has been sent</h2>", "lobby"],
  ["lobby: you\u2019re in the lobby", "<p>You\u2019re in the lobby</p>", "lobby"],
  ["lobby: text beside a Leave button is still the lobby", `<p>Someone will let you in soon</p>${CALL}`, "lobby"],
  ["lobby: text beside a hang-up and a toolbar is still the lobby", '<p>Waiting to be admitted</p><div data-tid="calling-toolbar"><button data-tid="hangup-main-btn">Leave</button></div>', "lobby"],
  // §8 denied.
  ["denied: Sorry, but you were denied access", "<h1>Sorry, but you were denied access to the meeting</h1>", "denied"],
  ["denied: request declined, with retry-cancel", '<h1>Your request to join was declined</h1><button data-tid="calling-retry-cancelbutton">Cancel</button>', "denied"],
  ["denied: text over a lobby text", "<p>Someone will let you in soon</p><p>Your request to join was declined</p>", "denied"],
  // §9 removed.
  ["removed: retry title, straight apostrophe", "<h1 id=\"calling-retry-screen-title\">You've been removed from this meeting</h1>", "removed"],
  ["removed: retry title, typographic apostrophe", '<h1 id="calling-retry-screen-title">You\u2019ve been removed from this meeting</h1>', "removed"],
  ["removed: text, typographic apostrophe, over the call view", `<h2>You\u2019ve been removed from this meeting</h2>${CALL}`, "removed"],
  ["removed: Removed from the meeting", "<h2>Removed from the meeting</h2>", "removed"],
  ["removed: You have been removed", "<h2>You have been removed from this meeting</h2>", "removed"],
  ["removed: words kept apart by a no-break space", "<h2>You&nbsp;have been removed from&nbsp;this meeting</h2>", "removed"],
  // §10 ended.
  ["ended: e2ee end screen", '<div data-tid="calling-e2ee-end-screen"><h1>Thanks for joining</h1></div>', "ended"],
  ["ended: the meeting has ended", "<h1>Sorry, the meeting has ended.</h1>", "ended"],
  ["ended: This meeting has ended", `<h1>This meeting has ended</h1>${CALL}`, "ended"],
  ["ended: Call ended", "<h1>Call ended</h1>", "ended"],
  ["ended: You left the meeting", "<h1>You left the meeting</h1>", "ended"],
];

describe("teams-dom.md outcome screens", { timeout: 90_000, concurrency: 4 }, () => {
  for (const [name, html, expected] of SCREENS) {
    test(name, async (t) => {
      const page = await pageWith(t, html);
      const probe = await probePage(page);
      assert.equal(classify(probe).screen, expected, JSON.stringify(probe.fired));
    });
  }

  for (const path of ["/postmeeting", "/meetingended", "/v2/#/calling/end"]) {
    test(`ended: URL ${path}`, async (t) => {
      const page = await pageWith(t, "");
      await page.route("http://teams.test/**", (route) => route.fulfill({ contentType: "text/html", body: "<h1>How was your call?</h1>" }));
      await page.goto(`http://teams.test${path}`);
      assert.equal(classify(await probePage(page)).screen, "ended");
    });
  }

  test("§11 participant signals: badge, roster rows, the only-one texts", async (t) => {
    const page = await pageWith(t, CALL);
    const set = (html: string) => page.evaluate(`document.getElementById("app").innerHTML = ${JSON.stringify(CALL + html)}`);
    assert.deepEqual(await pick(page), { badge: null, rosterRows: null, onlyOne: false }, "no badge: unknown");
    await set('<button id="roster-button" aria-label="People">People<span data-tid="toolbar-item-badge">3</span></button>');
    assert.equal((await pick(page)).badge, "3");
    await set('<div aria-label="People"><div role="tree"><div data-tid="participantsInCall-a">A</div><div data-tid="participantsInCall-b">B</div></div></div>');
    assert.equal((await pick(page)).rosterRows, 2);
    await set("<p>You\u2019re the only one here</p>");
    assert.equal((await pick(page)).onlyOne, true);
    await set("<p>Waiting for others to join\u2026</p>");
    assert.equal((await pick(page)).onlyOne, true);
  });
});

/** A port nothing listens on: one the system just handed out and took back. */
async function closedPort(): Promise<number> {
  const server = createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, "close");
  return port;
}

async function pick(page: Page) {
  const { badge, rosterRows, onlyOne } = await probePage(page);
  return { badge, rosterRows, onlyOne };
}

describe("teams-dom.md outcome paths of the adapter", { timeout: 90_000, concurrency: 4 }, () => {
  test("a lobby with a Leave button is the lobby, not the call: no admission false positive (§6, §7)", async (t) => {
    const page = await pageWith(t, "");
    const outcome = await joinMeeting(page, { url: dataUrl(`<p>Someone will let you in soon</p>${CALL}`), displayName: "Bot", logger, timeoutMs: 10_000 });
    assert.equal(outcome.kind, "lobby", JSON.stringify(outcome));
  });

  test("a form written with input buttons: launcher, name, Join now, lobby (§1, §3, §5)", async (t) => {
    const page = await pageWith(t, "");
    const html = `<input type="button" id="web" value="Continue on this browser">
      <script>
        const app = document.getElementById("app");
        document.getElementById("web").onclick = () => {
          app.innerHTML = '<form><input placeholder="Type your name"> <input type="submit" value="Join now"></form>';
          app.querySelector("form").onsubmit = (e) => {
            e.preventDefault();
            window.joinedAs = app.querySelector("input").value;
            app.innerHTML = "<p>Someone will let you in soon</p>";
          };
        };
      </script>`;
    await page.setContent(`<div id="app"><input type="submit" value="Join now"></div>`);
    assert.equal(classify(await probePage(page)).screen, "prejoin", "a Join now input alone is the pre-join screen");
    const outcome = await joinMeeting(page, { url: dataUrl(html), displayName: "Bot", logger, timeoutMs: 20_000 });
    assert.equal(outcome.kind, "lobby", JSON.stringify(outcome));
    assert.equal(await page.evaluate("window.joinedAs"), "Bot");
  });

  for (const [name, html, pattern] of [
    ["sign-in wall", '<input name="loginfmt"><p>To join this Teams meeting, you need to be signed in to an account.</p>', /signed-in account/],
    ["captcha", '<img data-tid="HIP-Captcha-Image" alt=""><p>Verify you\u2019re a real person</p>', /captcha/],
    ["wrong link", "<p>Looks like the meeting URL is incorrect.</p>", /URL is incorrect/],
    ["couldn't connect", "<p>Sorry, we couldn\u2019t connect you</p>", /could not connect/],
  ] as const) {
    test(`join: ${name} ends at once in an error`, async (t) => {
      const page = await pageWith(t, "");
      const started = Date.now();
      const outcome = await joinMeeting(page, { url: dataUrl(html), displayName: "Bot", logger, timeoutMs: 30_000 });
      assert.equal(outcome.kind, "error");
      assert.match(outcome.kind === "error" ? outcome.message : "", pattern);
      assert.ok(Date.now() - started < 5_000, `took ${Date.now() - started} ms`);
    });
  }

  test("join: a redirect to Microsoft's sign-in host that cannot load ends at once in the sign-in error (§8)", async (t) => {
    // Chromium's error page says chrome-error://, not where the redirect went.
    const page = await pageWith(t, "");
    await page.route("https://login.microsoftonline.com/**", (route) => route.abort("internetdisconnected"));
    const started = Date.now();
    const html = "<p>Loading</p><script>setTimeout(() => location.href = 'https://login.microsoftonline.com/common/oauth2/authorize?client_id=x', 200)</script>";
    const outcome = await joinMeeting(page, { url: dataUrl(html), displayName: "Bot", logger, timeoutMs: 30_000 });
    assert.match(outcome.kind === "error" ? outcome.message : JSON.stringify(outcome), /signed-in account/);
    assert.ok(Date.now() - started < 5_000, `took ${Date.now() - started} ms`);
  });

  test("join: a redirect to a page that does not load ends in an error naming it, not at the join timeout", async (t) => {
    const page = await pageWith(t, "");
    const port = await closedPort();
    const started = Date.now();
    const html = `<p>Loading</p><script>setTimeout(() => location.href = 'http://127.0.0.1:${port}/l/meetup-join/x', 200)</script>`;
    const outcome = await joinMeeting(page, { url: dataUrl(html), displayName: "Bot", logger, timeoutMs: 30_000 });
    const message = outcome.kind === "error" ? outcome.message : JSON.stringify(outcome);
    assert.ok(message.includes(`did not load (net::ERR_CONNECTION_REFUSED at http://127.0.0.1:${port})`), message);
    assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms`);
  });

  test("lobby wait with a lobby text that changes: the wait runs out (§6)", async (t) => {
    const page = await pageWith(t, "<p>Hi, Bot. Someone will let you in when the meeting starts.</p>");
    const started = Date.now();
    const wait = waitForAdmission(page, { timeoutMs: 3_000, logger });
    await page.evaluate(`document.getElementById("app").innerHTML = "<p>Someone in the meeting should let you in soon</p>"`);
    assert.equal(await wait, "timeout");
    assert.ok(Date.now() - started >= 3_000);
  });

  test("the audio/video dialog over the call is dismissed, so the roster opens and alone is seen (§2, §11)", async (t) => {
    const page = await pageWith(t, `${CALL}<button id="roster-button" aria-label="People">People</button><div id="panel"></div>
      <div id="modal" style="position:fixed;inset:0;background:#fff"><button>Continue without audio or video</button></div>
      <script>
        document.querySelector("#modal button").onclick = () => document.getElementById("modal").remove();
        document.getElementById("roster-button").onclick = () => document.getElementById("panel").innerHTML =
          '<div aria-label="People"><div role="tree"><div data-tid="participantsInCall-0">Bot</div></div></div>';
      </script>`);
    const started = Date.now();
    assert.equal(await watchCall(page, { logger, intervalMs: 200, signal: AbortSignal.timeout(10_000) }), "alone");
    assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms`);
    assert.equal(await page.locator("#modal").count(), 0);
  });

  test("'we couldn't connect you' where the call was: an error at once, not after the call view is missed for 30 s", async (t) => {
    const page = await pageWith(t, CALL);
    const watch = watchCall(page, { logger, intervalMs: 200, signal: AbortSignal.timeout(10_000) });
    await page.evaluate(`document.getElementById("app").innerHTML = "<h1>Sorry, we couldn\u2019t connect you</h1>"`);
    const started = Date.now();
    const result = await watch;
    assert.match(typeof result === "object" ? result.error : result, /could not connect/);
    assert.ok(Date.now() - started < 3_000, `took ${Date.now() - started} ms`);
  });

  test("no badge and no roster: unknown, never alone; the only-one text: alone after five checks (§11)", async (t) => {
    const page = await pageWith(t, CALL);
    const counts: (number | null)[] = [];
    const started = Date.now();
    let aloneShownAt = 0;
    const watch = watchCall(page, { logger, intervalMs: 200, onParticipants: (n) => counts.push(n) });
    await new Promise((r) => setTimeout(r, 2_000));
    assert.deepEqual(counts, [null], "a missing badge is unknown");
    aloneShownAt = Date.now();
    await page.evaluate(`document.getElementById("app").insertAdjacentHTML("beforeend", "<p>Waiting for others to join</p>")`);
    assert.equal(await watch, "alone");
    assert.deepEqual(counts, [null, 1]);
    // Five checks at 200 ms: the first one sees it, then four more intervals.
    const took = Date.now() - aloneShownAt;
    assert.ok(took >= 4 * 200 && took < 3_000, `alone after ${took} ms (started ${Date.now() - started} ms ago)`);
  });
});
