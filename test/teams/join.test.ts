// joinMeeting and waitForAdmission against the Teams fixture in a real headless Chromium.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { joinMeeting, normalizeMeetingUrl, waitForAdmission } from "../../worker/teams/index.ts";
import { newPage, startHarness, stopHarness, type Harness } from "./harness.ts";
import { holdMediaLock } from "../harness/media-lock.ts";

// Real Chromium, PulseAudio and ffmpeg: one such file at a time (see media-lock.ts).
await holdMediaLock();

let h: Harness | undefined;
before(async () => (h = await startHarness()));
after(() => stopHarness(h));

function harness(): Harness {
  assert.ok(h, "harness started");
  return h;
}

const TIMEOUT = { timeout: 60_000 };

describe("joinMeeting", () => {
  for (const form of ["meetupJoin", "meet", "v2"] as const) {
    test(`link form ${form}: name set, camera and mic off, into the lobby`, TIMEOUT, async (t) => {
      const { fixture, logger } = harness();
      const meeting = fixture.createMeeting({ lobby: true });
      const normalized = normalizeMeetingUrl(meeting.joinUrls[form], [fixture.hostPort]);
      assert.ok("url" in normalized, JSON.stringify(normalized));
      const page = await newPage(t, harness());
      const outcome = await joinMeeting(page, { url: normalized.url, displayName: "Recorder Bot", logger, timeoutMs: 30_000 });
      assert.equal(outcome.kind, "lobby", JSON.stringify(outcome));
      const state = meeting.state();
      assert.equal(state.phase, "lobby");
      assert.equal(state.displayName, "Recorder Bot");
      assert.equal(state.cameraOn, false);
      assert.equal(state.micOn, false);
    });
  }

  test("dialog before and again after Join now; no lobby: straight into the call", TIMEOUT, async (t) => {
    const { fixture, logger } = harness();
    const meeting = fixture.createMeeting({ lobby: false, modalBeforeJoin: true, modalAfterJoin: true });
    const page = await newPage(t, harness());
    const outcome = await joinMeeting(page, { url: meeting.joinUrls.meet, displayName: "Bot", logger, timeoutMs: 30_000 });
    assert.equal(outcome.kind, "in_call", JSON.stringify(outcome));
    const state = meeting.state();
    assert.equal(state.phase, "in_call");
    assert.equal(state.cameraOn, false);
    assert.equal(state.micOn, false);
    assert.equal(state.muted, true);
  });

  const blocked = [
    { name: "sign-in wall", variant: "signin", expect: /signed-in account/ },
    { name: "captcha", variant: "captcha", expect: /captcha/ },
  ] as const;
  for (const c of blocked) {
    test(`${c.name} ends in a clear error`, TIMEOUT, async (t) => {
      const { fixture, logger } = harness();
      const meeting = fixture.createMeeting({ variant: c.variant });
      const page = await newPage(t, harness());
      const outcome = await joinMeeting(page, { url: meeting.joinUrl, displayName: "Bot", logger, timeoutMs: 30_000 });
      assert.equal(outcome.kind, "error");
      assert.match((outcome as { message: string }).message, c.expect);
    });
  }

  test("wrong link (unknown meeting) and wrong passcode end in their own clear errors", TIMEOUT, async (t) => {
    const { fixture, logger } = harness();
    const meeting = fixture.createMeeting();
    const page = await newPage(t, harness());
    const unknown = await joinMeeting(page, { url: `${fixture.url}/meet/000000?p=x`, displayName: "Bot", logger, timeoutMs: 20_000 });
    assert.deepEqual(unknown, { kind: "error", code: "meeting_not_found", message: "Teams says the meeting URL is incorrect; check the link." });
    const wrong = await joinMeeting(page, { url: meeting.joinUrls.meet.replace(/p=[^&]+/, "p=wrong"), displayName: "Bot", logger, timeoutMs: 20_000 });
    assert.equal(wrong.kind, "error");
    assert.equal((wrong as { code: string }).code, "passcode_incorrect");
  });

  test("a page that never loads ends in an error, not a hang", TIMEOUT, async (t) => {
    const { logger } = harness();
    const page = await newPage(t, harness());
    // Port 9 (discard) on loopback: nothing listens, the connection is refused.
    const outcome = await joinMeeting(page, { url: "http://127.0.0.1:9/meet/1?p=1", displayName: "Bot", logger, timeoutMs: 10_000 });
    assert.equal(outcome.kind, "error");
    assert.match((outcome as { message: string }).message, /never loaded/);
  });

  test("an aborted signal stops the join", TIMEOUT, async (t) => {
    const { fixture, logger } = harness();
    const meeting = fixture.createMeeting();
    const page = await newPage(t, harness());
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error("stopped by test")), 300);
    await assert.rejects(
      joinMeeting(page, { url: meeting.joinUrl, displayName: "Bot", logger, signal: ac.signal, timeoutMs: 30_000 }),
      /stopped by test/,
    );
  });
});

describe("waitForAdmission", () => {
  async function inLobby(t: Parameters<typeof newPage>[0]) {
    const { fixture, logger } = harness();
    const meeting = fixture.createMeeting({ lobby: true });
    const page = await newPage(t, harness());
    const outcome = await joinMeeting(page, { url: meeting.joinUrl, displayName: "Bot", logger, timeoutMs: 30_000 });
    assert.equal(outcome.kind, "lobby");
    return { meeting, page, logger };
  }

  test("lobby → admitted → in the call", TIMEOUT, async (t) => {
    const { meeting, page, logger } = await inLobby(t);
    const wait = waitForAdmission(page, { timeoutMs: 30_000, logger });
    setTimeout(() => meeting.admit(), 1500);
    assert.equal(await wait, "admitted");
    assert.equal(meeting.state().phase, "in_call");
  });

  test("lobby → denied", TIMEOUT, async (t) => {
    const { meeting, page, logger } = await inLobby(t);
    const wait = waitForAdmission(page, { timeoutMs: 30_000, logger });
    setTimeout(() => meeting.deny(), 1000);
    assert.equal(await wait, "denied");
  });

  test("nobody reacts: timeout, still in the lobby", TIMEOUT, async (t) => {
    const { meeting, page, logger } = await inLobby(t);
    assert.equal(await waitForAdmission(page, { timeoutMs: 2500, logger }), "timeout");
    assert.equal(meeting.state().phase, "lobby");
  });

  test("a pre-join page is not mistaken for the lobby", TIMEOUT, async (t) => {
    const { fixture, logger } = harness();
    const meeting = fixture.createMeeting({ lobby: true });
    const page = await newPage(t, harness());
    await page.goto(meeting.joinUrl);
    await page.locator('button[data-tid="joinOnWeb"]').click();
    await page.locator('[data-tid="prejoin-join-button"]').waitFor();
    // Never joined: the wait must not report admission, and must not wait out a long lobby.
    const result = await waitForAdmission(page, { timeoutMs: 40_000, logger });
    assert.equal(typeof result, "object", String(result));
    assert.equal((result as { code: string }).code, "prejoin_stuck");
    assert.match((result as { error: string }).error, /pre-join/);
  });
});
