/**
 * teams-dom.md "2026 facts" against the fixture's light meeting, in real headless Chromium: both
 * link forms (and v2) → launcher → /light-meetings/launch with its empty first seconds, the
 * shroud over the form, the dialog after "Join now", the lightExperience=false detour → lobby
 * (disabled "Join now" beside the text) → call (`button[data-tid="call-end"]`) → each ending;
 * and each ending told by the signalling WebSocket's conversationEnd frame alone.
 */
import assert from "node:assert/strict";
import { after, before, describe, test, type TestContext } from "node:test";
import type { Page } from "playwright-core";
import { watchConversationEnd } from "../../worker/teams/conversation-end.ts";
import { joinMeeting, leaveMeeting, waitForAdmission, watchCall } from "../../worker/teams/index.ts";
import type { FixtureMeeting, MeetingOptions } from "../fixture/teams/server.ts";
import { startHarness, stopHarness, type Harness } from "./harness.ts";
import { holdMediaLock } from "../harness/media-lock.ts";

await holdMediaLock();

let h: Harness | undefined;
before(async () => (h = await startHarness(["--lang=en-US", "--accept-lang=en-US,en"])));
after(() => stopHarness(h));

const TIMEOUT = { timeout: 90_000 };
const FAST = { intervalMs: 200 };

async function lightPage(t: TestContext): Promise<Page> {
  assert.ok(h);
  const context = await h.browser.newContext({ locale: "en-US" });
  t.after(() => context.close().catch(() => undefined));
  return context.newPage();
}

async function join(t: TestContext, options: Partial<MeetingOptions>, form: "meetupJoin" | "meet" | "v2" = "meetupJoin") {
  assert.ok(h);
  const { fixture, logger } = h;
  const meeting = fixture.createMeeting({ light: true, lobby: true, loadingMs: 2000, shroudMs: 2000, ...options });
  const page = await lightPage(t);
  const ends = watchConversationEnd(page, logger);
  t.after(() => ends.dispose());
  const steps: string[] = [];
  const outcome = await joinMeeting(page, {
    url: meeting.joinUrls[form],
    displayName: "Light Bot",
    logger,
    timeoutMs: 60_000,
    ends,
    steps: { step: (stage, f) => steps.push(`${stage}:${f?.screen ?? ""}:${f?.signal ?? ""}`) },
  });
  return { meeting, page, outcome, ends, logger, steps };
}

async function admitted(t: TestContext, options: Partial<MeetingOptions> = {}) {
  const r = await join(t, options);
  assert.equal(r.outcome.kind, "lobby", JSON.stringify(r.outcome));
  const wait = waitForAdmission(r.page, { timeoutMs: 30_000, logger: r.logger, ends: r.ends });
  await r.meeting.waitForPhase("lobby");
  r.meeting.admit();
  assert.equal(await wait, "admitted");
  return r;
}

describe("light meetings join", () => {
  for (const form of ["meetupJoin", "meet", "v2"] as const) {
    test(`${form} link: launcher → light page → shroud, late dialog → lobby with its disabled Join now`, TIMEOUT, async (t) => {
      // A shroud that outlasts the join: every press goes through the keyboard.
      const { meeting, page, outcome, steps } = await join(t, { shroudMs: 120_000 }, form);
      assert.equal(outcome.kind, "lobby", JSON.stringify(outcome));
      assert.match(page.url(), /\/light-meetings\/launch\?.*lightExperience=true/);
      const state = meeting.state();
      assert.equal(state.phase, "lobby");
      assert.equal(state.displayName, "Light Bot");
      assert.equal(state.cameraOn, false);
      assert.equal(state.micOn, false);
      assert.equal(state.language, "en");
      assert.ok(steps.some((s) => s.startsWith("launcher_continue")), steps.join("\n"));
      assert.ok(steps.some((s) => s.startsWith("modal_dismissed")), steps.join("\n"));
      assert.ok(steps.some((s) => s.startsWith("join_now") && s.includes("(keyboard)")), steps.join("\n"));
    });
  }

  test("a page that renders German anyway (the browser asked for English): its dialog, lobby and Leave are known", TIMEOUT, async (t) => {
    const { meeting, page, outcome, steps, logger, ends } = await join(t, { language: "de" });
    assert.equal(meeting.state().language, "de");
    assert.equal(outcome.kind, "lobby", `${JSON.stringify(outcome)}\n${steps.join("\n")}`);
    assert.ok(steps.some((s) => s.startsWith("modal_dismissed")), steps.join("\n"));
    const wait = waitForAdmission(page, { timeoutMs: 30_000, logger, ends });
    meeting.admit();
    assert.equal(await wait, "admitted");
    await leaveMeeting(page, logger);
    assert.equal(meeting.state().phase, "left");
  });

  test("a lightExperience=false detour: the join restarts and still reaches the lobby", TIMEOUT, async (t) => {
    const { outcome, steps } = await join(t, { heavyDetours: 1 });
    assert.equal(outcome.kind, "lobby", JSON.stringify(outcome));
    assert.ok(steps.some((s) => s.startsWith("light_experience_off")), steps.join("\n"));
  });

  test("sent to the full client after every restart: a clear error at once, not the unknown page's 30 s", TIMEOUT, async (t) => {
    const started = performance.now();
    const { outcome, steps } = await join(t, { heavyDetours: 3 });
    assert.equal(outcome.kind, "error", JSON.stringify(outcome));
    assert.equal((outcome as { code?: string }).code, "unexpected_page");
    assert.match((outcome as { message?: string }).message ?? "", /full client \(lightExperience=false\) 3 times/);
    assert.equal(steps.filter((s) => s.startsWith("light_experience_off")).length, 2, steps.join("\n"));
    assert.ok(performance.now() - started < 25_000, `took ${Math.round(performance.now() - started)} ms`);
  });

  test("call: call-end is the call view; leaving presses it", TIMEOUT, async (t) => {
    const { meeting, page, logger } = await admitted(t);
    assert.equal(meeting.state().phase, "in_call");
    const left = await leaveMeeting(page, logger);
    assert.equal(left.signal, 'button[data-tid="call-end"]');
    assert.equal(meeting.state().phase, "left");
  });

  test("endings on screen: denied in the lobby, removed and ended in the call", TIMEOUT, async (t) => {
    const lobby = await join(t, {});
    assert.equal(lobby.outcome.kind, "lobby");
    const wait = waitForAdmission(lobby.page, { timeoutMs: 30_000, logger: lobby.logger });
    lobby.meeting.deny();
    assert.equal(await wait, "denied");

    const a = await admitted(t);
    const watch = watchCall(a.page, { logger: a.logger, ...FAST });
    a.meeting.end();
    assert.equal(await watch, "meeting_ended");
  });
});

describe("endings told by the signalling WebSocket alone", () => {
  const silent = { screen: false };

  test("denied in the lobby (subCode 5854), the lobby still on screen", TIMEOUT, async (t) => {
    const { meeting, page, outcome, ends, logger } = await join(t, {});
    assert.equal(outcome.kind, "lobby");
    const wait = waitForAdmission(page, { timeoutMs: 30_000, logger, ends });
    meeting.deny(silent);
    assert.equal(await wait, "denied");
    assert.equal(ends.latest()?.subCode, 5854);
    assert.equal(await page.locator("text=Someone in the meeting should let you in soon").count(), 1, "the screen still shows the lobby");
  });

  for (const [name, act, expected, subCode] of [
    ["removed (subCode 5000)", (m: FixtureMeeting) => m.remove(silent), "removed", 5000],
    ["meeting ended", (m: FixtureMeeting) => m.end(silent), "meeting_ended", 0],
  ] as const) {
    test(`${name} in the call, the call view still on screen`, TIMEOUT, async (t) => {
      const { meeting, page, ends, logger } = await admitted(t);
      const watch = watchCall(page, { logger, ...FAST, ends });
      await new Promise((r) => setTimeout(r, 600));
      act(meeting);
      assert.equal(await watch, expected);
      assert.equal(ends.latest()?.subCode, subCode);
      assert.equal(await page.locator('button[data-tid="call-end"]').count(), 1, "the call view is still there");
    });
  }

  test("anonymous join disabled (subCode 5723) behind a generic \"we couldn't connect you\"", TIMEOUT, async (t) => {
    assert.ok(h);
    const meeting = h.fixture.createMeeting({ variant: "anon_disabled" });
    const page = await lightPage(t);
    const ends = watchConversationEnd(page, h.logger);
    t.after(() => ends.dispose());
    const outcome = await joinMeeting(page, { url: meeting.joinUrl, displayName: "Bot", logger: h.logger, timeoutMs: 30_000, ends });
    assert.equal(outcome.kind, "error");
    assert.equal((outcome as { code: string }).code, "anonymous_join_disabled");
  });
});
