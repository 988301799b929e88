/**
 * How a session ends, through the HTTP API with the real worker, against the second Teams
 * imitation (test/fixture/teams-alt) switched to the other forms teams-dom.md allows: blocked
 * joins (§5, §8), denial by each text of §8 with and without the retry-cancel button, lobby texts
 * of §6 and the lobby wait running out, removal by §9's texts, the end of the meeting by §10's
 * screens, URLs and texts, and alone by §11's text, each with the launcher forms of §1 and the
 * dialog of §2 before or after "Join now". Several bots run at once per test to keep it short;
 * every text on its own is recognised in test/teams/outcome-screens.test.ts.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { describe, test, type TestContext } from "node:test";
import { startAltTeamsFixture, type AltFixture, type AltMeeting, type AltOptions } from "../fixture/teams-alt/server.ts";
import { holdMediaLock } from "../harness/media-lock.ts";
import { startBotApp, waitForSession, type BotApp } from "./fixtures/bot-app.ts";

// Real Chromium, PulseAudio and ffmpeg: one such file at a time (see media-lock.ts).
await holdMediaLock();

type Json = Record<string, unknown>;
interface Bot {
  id: string;
  meeting: AltMeeting;
}

async function setUp(t: TestContext, bot: Record<string, string> = {}): Promise<{ fixture: AltFixture; app: BotApp }> {
  const fixture = await startAltTeamsFixture();
  t.after(() => fixture.close());
  const app = await startBotApp(t, { worker: "real", bot: { MEETING_ALLOWED_HOSTS: `teams.microsoft.com,${fixture.hostPort}`, ...bot } });
  return { fixture, app };
}

/** Sends one bot per meeting, all at once. */
async function send(app: BotApp, fixture: AltFixture, options: Partial<AltOptions>[]): Promise<Bot[]> {
  return Promise.all(
    options.map(async (o) => {
      const meeting = fixture.createMeeting(o);
      const join = await app.request("POST", "/join", { body: { meeting_url: meeting.joinUrl, display_name: "Alt Bot" } });
      assert.equal(join.status, 200, join.text);
      return { id: String(((join.body as Json).session as Json).session_id), meeting };
    }),
  );
}

const finished = (s: Json) => s.ended_at !== null && s.ended_at !== undefined;
const ms = (s: Json, from: keyof Json, to: keyof Json) => Date.parse(String(s[to])) - Date.parse(String(s[from]));

function assertStored(app: BotApp, s: Json): void {
  assert.equal(s.status, "stopped");
  assert.ok(typeof s.recording_file === "string" && s.recording_file.startsWith(app.recordingsDir), String(s.recording_file));
  assert.ok(existsSync(String(s.recording_file)), "the recording is stored");
  assert.ok(Number(s.recording_bytes) > 50_000, `recording_bytes ${String(s.recording_bytes)}`);
}

describe("outcomes against another Teams imitation (real worker, sqlite)", { timeout: 600_000, concurrency: false }, () => {
  test("blocked joins end at once in error with a clear message, never at the join timeout", async (t) => {
    const { fixture, app } = await setUp(t);
    const cases: [Partial<AltOptions>, RegExp][] = [
      [{ block: "signin" }, /signed-in account/],
      [{ block: "wrong_link", launcher: "link" }, /meeting URL is incorrect/],
      [{ block: "cant_connect", dialog: "after" }, /could not connect/],
      [{ block: "captcha", launcher: "aria", dialog: "before" }, /captcha/],
    ];
    const bots = await send(app, fixture, cases.map(([o]) => o));
    for (const [i, bot] of bots.entries()) {
      const s = await waitForSession(app, bot.id, finished, 120_000);
      const [options, message] = cases[i] ?? [];
      t.diagnostic(`${JSON.stringify(options)}: ${ms(s, "created_at", "ended_at")} ms, ${String(s.error_message)}`);
      assert.equal(s.status, "error", JSON.stringify(s));
      assert.equal(s.end_reason, "error");
      assert.match(String(s.error_message), message ?? /./);
      assert.equal(s.recording_file, null);
      // The join gives up after 90 s; a blocked page must be told long before that.
      assert.ok(ms(s, "created_at", "ended_at") < 45_000, `ended after ${ms(s, "created_at", "ended_at")} ms`);
    }
    assert.equal(bots[0]?.meeting.state().phase, "launcher", "the sign-in page stopped the join");
  });

  test("denied by each text of §8, with and without retry-cancel; the lobby wait of 0.1 minutes runs out", async (t) => {
    const open = await setUp(t);
    const short = await setUp(t, { MEETING_WAIT_FOR_LOBBY: "0.1" });
    const [sorry, declined] = await send(open.app, open.fixture, [
      { launcher: "link" },
      { launcher: "aria", dialog: "after", lobbyText: "Someone in the meeting should let you in soon" },
    ]);
    const waits = await send(short.app, short.fixture, [
      // A lobby page that also shows the call's Leave button is still the lobby.
      { lobbyText: "Hi, {name}. Someone will let you in when the meeting starts.", lobbyLeave: true, dialog: "before" },
      { lobbyText: "You\u2019re in the lobby", dialog: "none" },
    ]);
    assert.ok(sorry && declined);
    const lobbySeen = await Promise.all(
      waits.map(async (b) => {
        await waitForSession(short.app, b.id, (s) => s.status === "lobby", 120_000);
        return Date.now();
      }),
    );
    for (const [bot, screen] of [
      [sorry, undefined],
      [declined, { text: "Your request to join was declined" }],
    ] as const) {
      await waitForSession(open.app, bot.id, (s) => s.status === "lobby", 120_000);
      assert.equal((await bot.meeting.waitForPhase("lobby")).displayName, "Alt Bot");
      const at = Date.now();
      bot.meeting.deny(screen);
      const s = await waitForSession(open.app, bot.id, finished, 60_000);
      t.diagnostic(`denied ${JSON.stringify(screen ?? "default")}: told after ${Date.parse(String(s.ended_at)) - at} ms`);
      assert.equal(s.status, "denied", JSON.stringify(s));
      assert.equal(s.end_reason, "denied");
      assert.equal(s.error_message, null);
      assert.equal(s.recording_file, null);
      assert.ok(Date.parse(String(s.ended_at)) - at < 15_000);
    }
    for (const [i, bot] of waits.entries()) {
      const s = await waitForSession(short.app, bot.id, finished, 60_000);
      const inLobby = Date.parse(String(s.ended_at)) - (lobbySeen[i] ?? 0);
      t.diagnostic(`lobby wait ${i}: ended ${inLobby} ms after the lobby was reported`);
      assert.equal(s.status, "not_admitted", JSON.stringify(s));
      assert.equal(s.end_reason, "lobby_timeout");
      assert.equal(s.joined_at, null, "never counted as admitted");
      assert.equal(s.recording_file, null);
      assert.ok(inLobby >= 5_500 && inLobby < 20_000, `ended ${inLobby} ms after the lobby`);
    }
    assert.equal(waits[0]?.meeting.state().phase, "left", "the bot left the lobby by its Leave button");
  });

  test("removed by §9's texts and the end of the meeting by §10's screen and text: the recording is stored", async (t) => {
    const { fixture, app } = await setUp(t);
    const bots = await send(app, fixture, [
      { lobby: false, launcher: "link", dialog: "before" },
      { lobby: false, launcher: "aria", dialog: "after" },
      { lobby: false },
      { lobby: false, dialog: "none" },
    ]);
    await Promise.all(bots.map((b) => waitForSession(app, b.id, (s) => s.status === "recording", 120_000)));
    await new Promise((r) => setTimeout(r, 2_000));
    const [a, b, c, d] = bots;
    assert.ok(a && b && c && d);
    a.meeting.remove({ text: "You\u2019ve been removed from this meeting", marker: true });
    b.meeting.remove({ text: "Removed from the meeting" });
    c.meeting.end({ end: { e2ee: true } });
    d.meeting.end({ end: { text: "Call ended" } });
    const at = Date.now();
    for (const [bot, reason] of [[a, "removed"], [b, "removed"], [c, "meeting_ended"], [d, "meeting_ended"]] as const) {
      const s = await waitForSession(app, bot.id, finished, 60_000);
      t.diagnostic(`${reason}: ended ${Date.parse(String(s.ended_at)) - at} ms after the screen`);
      assert.equal(s.end_reason, reason, JSON.stringify(s));
      assertStored(app, s);
      assert.ok(Date.parse(String(s.ended_at)) - at < 20_000);
    }
  });

  test("the end by §10's URLs and 'you left the meeting'; alone by 'waiting for others to join' after five checks, never while the count is unknown", async (t) => {
    const { fixture, app } = await setUp(t);
    const bots = await send(app, fixture, [
      { lobby: false, launcher: "link" },
      { lobby: false, dialog: "after" },
      { lobby: false, launcher: "aria" },
      { lobby: false, roster: false, participants: 2, aloneText: "Waiting for others to join\u2026" },
    ]);
    await Promise.all(bots.map((b) => waitForSession(app, b.id, (s) => s.status === "recording", 120_000)));
    const [a, b, c, alone] = bots;
    assert.ok(a && b && c && alone);
    // No badge, no roster, no text: the count is unknown, which is not alone (§11).
    await new Promise((r) => setTimeout(r, 7_000));
    const still = (await app.request("GET", `/status/${alone.id}`)).body as Json;
    assert.equal(still.status, "recording");
    assert.equal(still.participant_count, null);

    a.meeting.end({ end: { url: "/postmeeting?meetingId=1" } });
    b.meeting.end({ end: { url: "/v2/?meetingjoin=true#/calling/end" } });
    c.meeting.end({ end: { text: "You left the meeting" } });
    alone.meeting.setParticipants(1);
    const at = Date.now();
    for (const [bot, reason] of [[a, "meeting_ended"], [b, "meeting_ended"], [c, "meeting_ended"], [alone, "alone"]] as const) {
      const s = await waitForSession(app, bot.id, finished, 60_000);
      const after = Date.parse(String(s.ended_at)) - at;
      t.diagnostic(`${reason}: ended ${after} ms after the screen`);
      assert.equal(s.end_reason, reason, JSON.stringify(s));
      assertStored(app, s);
      assert.ok(after < 20_000, `ended ${after} ms after`);
      // recorder-bot.md Limits: five consecutive one-second checks, the first within a second.
      if (reason === "alone") assert.ok(after >= 4_000, `alone after only ${after} ms`);
    }
  });
});
