/**
 * Issue #16: every error end carries its `error_code`, found without waiting for a timeout, with
 * evidence an operator can look at. Real worker (Chromium, PulseAudio, ffmpeg) against the Teams
 * fixture, one session per code the fixture can produce; status, sessions list and `finished`
 * webhook agree. Detection times are logged and bounded loosely (far below the join timeout):
 * the machine is shared, so no tight timing is asserted.
 */
import assert from "node:assert/strict";
import { describe, test, type TestContext } from "node:test";
import { listProcesses } from "../../shared/process/group.ts";
import { startTeamsFixture, type MeetingOptions, type TeamsFixture } from "../fixture/teams/server.ts";
import { freePort } from "../harness/free-port.ts";
import { holdMediaLock } from "../harness/media-lock.ts";
import { startBotApp, waitForSession, type BotApp } from "./fixtures/bot-app.ts";
import { checkEvidence, detectionMs } from "./fixtures/evidence.ts";
import { hear } from "./fixtures/media.ts";
import { startReceiver, type Receiver } from "./fixtures/receiver.ts";

await holdMediaLock();

type Json = Record<string, unknown>;
const TOKEN = "bot-access-token-i16-secret";
const JOIN_TIMEOUT_SECONDS = 120;
/** "Never waits for the timeout": far below JOIN_TIMEOUT_SECONDS, generous for a loaded box. */
const NO_TIMEOUT_BOUND_MS = 45_000;
const VIEWPORT = { width: 1280, height: 720 };

interface Env {
  fixture: TeamsFixture;
  receiver: Receiver;
  app: BotApp;
}

async function env(t: TestContext, bot: Json = {}): Promise<Env> {
  const fixture = await startTeamsFixture();
  t.after(() => fixture.close());
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const app = await startBotApp(t, {
    worker: "real",
    bot: { MEETING_ALLOWED_HOSTS: fixture.hostPort, WEBHOOK_URL: receiver.url, BOT_ACCESS_TOKEN: TOKEN, JOIN_TIMEOUT_SECONDS, ...bot },
  });
  return { fixture, receiver, app };
}

async function join(e: Env, url: string): Promise<string> {
  const res = await e.app.request("POST", "/join", { token: TOKEN, body: { meeting_url: url, display_name: "Evidence Bot" } });
  assert.equal(res.status, 200, res.text);
  return String(((res.body as Json).session as Json).session_id);
}

/** The session ends in `error` with `code` everywhere it is reported; its evidence checks out. */
async function expectError(e: Env, id: string, code: string, opts: { secrets: string[]; expectPage?: boolean; since?: number; timeoutMs?: number }) {
  const done = await waitForSession(e.app, id, (s) => s.status === "error", opts.timeoutMs ?? 150_000, TOKEN);
  assert.equal(done.error_code, code, JSON.stringify(done));
  assert.equal(done.end_reason, "error");
  assert.ok(typeof done.error_message === "string" && done.error_message.length > 0);
  const list = await e.app.request("GET", `/sessions?status=error`, { token: TOKEN });
  const entry = (list.body as { sessions: Json[] }).sessions.find((s) => s.session_id === id);
  assert.equal(entry?.error_code, code);
  const hook = await e.receiver.waitFor((w) => w.event === "finished" && w.session_id === id);
  assert.equal(hook.error_code, code);
  const evidence = await checkEvidence(e.app, TOKEN, id, { secrets: [TOKEN, ...opts.secrets], expectPage: opts.expectPage ?? true, viewport: VIEWPORT });
  assert.deepEqual([...(hook.evidence_files as string[])].sort(), [...evidence.files].sort());
  const detectMs = detectionMs(evidence.steps, opts.since);
  const total = Date.parse(String(done.ended_at)) - Date.parse(String(done.created_at));
  console.log(`# ${code}: detected ${detectMs} ms after the page action (session ${total} ms in all)`);
  return { done, evidence, detectMs, total };
}

async function pidOf(sessionId: string, match: (cmdline: string) => boolean, timeoutMs = 30_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const p = (await listProcesses()).find((x) => x.cmdline.includes(sessionId) && match(x.cmdline));
    if (p) return p.pid;
    if (Date.now() > deadline) throw new Error(`no process of ${sessionId}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("error_code for each failure the fixture can produce", { timeout: 900_000, concurrency: false }, () => {
  const pageCases: Array<{ code: string; options: Partial<MeetingOptions>; url?: (f: TeamsFixture, m: { joinUrls: { meet: string } }) => string }> = [
    { code: "login_required", options: { variant: "signin_redirect" } },
    { code: "login_required", options: { variant: "signin" } },
    { code: "anonymous_join_disabled", options: { variant: "anon_disabled" } },
    { code: "captcha", options: { variant: "captcha" } },
    { code: "meeting_not_found", options: {}, url: (f) => `${f.url}/meet/000000000?p=nothing` },
    { code: "passcode_incorrect", options: {}, url: (_f, m) => m.joinUrls.meet.replace(/p=[^&]+/, "p=wrongpass") },
    { code: "meeting_unreachable", options: { variant: "cant_connect" } },
  ];

  test("the page tells: sign-in (redirect and wall), anonymous join disabled, captcha, bad link, wrong passcode, can't connect", async (t) => {
    const e = await env(t);
    for (const c of pageCases) {
      const meeting = e.fixture.createMeeting({ lobby: true, ...c.options });
      const id = await join(e, c.url ? c.url(e.fixture, meeting) : meeting.joinUrls.meet);
      const r = await expectError(e, id, c.code, { secrets: [meeting.passcode] });
      assert.ok(r.detectMs < NO_TIMEOUT_BOUND_MS, `${c.code} took ${r.detectMs} ms`);
      assert.ok(r.total < JOIN_TIMEOUT_SECONDS * 1000, `${c.code}: the session waited for the join timeout (${r.total} ms)`);
    }
  });

  test("a page that never loads: meeting_unreachable, and neither its message, the webhooks nor the log lines name the passcode", async (t) => {
    const closed = await freePort();
    const receiver = await startReceiver();
    t.after(() => receiver.close());
    const app = await startBotApp(t, { worker: "real", bot: { MEETING_ALLOWED_HOSTS: `127.0.0.1:${closed}`, WEBHOOK_URL: receiver.url, BOT_ACCESS_TOKEN: TOKEN } });
    const e = { app, receiver } as Env;
    const passcode = "NeverLoadedPass42";
    const id = await join(e, `http://127.0.0.1:${closed}/meet/123456789012?p=${passcode}`);
    const { done } = await expectError(e, id, "meeting_unreachable", { secrets: [passcode], expectPage: false });
    assert.match(String(done.error_message), /never loaded/);
    assert.doesNotMatch(String(done.error_message), new RegExp(passcode));
    assert.deepEqual(receiver.events.filter((w) => JSON.stringify(w).includes(passcode)), [], "no webhook names it");
    assert.deepEqual(app.logs.lines.filter((l) => l.includes(passcode)), [], "no log line names it");
  });

  test("a page stuck before the lobby ends prejoin_stuck at JOIN_TIMEOUT_SECONDS; an unknown page unexpected_page after 30 s", async (t) => {
    const e = await env(t, { JOIN_TIMEOUT_SECONDS: 15 });
    const stuck = e.fixture.createMeeting({ variant: "stuck" });
    const r = await expectError(e, await join(e, stuck.joinUrls.meet), "prejoin_stuck", { secrets: [stuck.passcode] });
    // It is the timeout that tells: the session ran at least that long.
    assert.ok(r.total >= 15_000, `prejoin_stuck after ${r.total} ms`);

    const e2 = await env(t, { JOIN_TIMEOUT_SECONDS: 100 });
    const unknown = e2.fixture.createMeeting({ variant: "unknown" });
    const u = await expectError(e2, await join(e2, unknown.joinUrls.meet), "unexpected_page", { secrets: [unknown.passcode] });
    assert.ok(u.detectMs >= 30_000, `unexpected_page after ${u.detectMs} ms, before 30 s of an unknown page`);
    assert.ok(u.total < 100_000, `unexpected_page only at the join timeout (${u.total} ms)`);
  });

  test("a killed browser is browser_crashed; a killed ffmpeg audio_failed", async (t) => {
    const e = await env(t);
    const lobby = e.fixture.createMeeting({ lobby: true });
    const id = await join(e, lobby.joinUrls.meet);
    await waitForSession(e.app, id, (s) => s.status === "lobby", 120_000, TOKEN);
    const chromium = await pidOf(id, (c) => /chromium/.test(c) && c.includes("--user-data-dir=") && !c.includes("--type="));
    const killedAt = Date.now();
    process.kill(-chromium, "SIGKILL");
    const b = await expectError(e, id, "browser_crashed", { secrets: [lobby.passcode], expectPage: false, since: killedAt });
    assert.ok(b.detectMs < NO_TIMEOUT_BOUND_MS, `browser_crashed after ${b.detectMs} ms`);

    const call = e.fixture.createMeeting({ lobby: false });
    const id2 = await join(e, call.joinUrls.meet);
    await waitForSession(e.app, id2, (s) => s.status === "recording", 120_000, TOKEN);
    const ffmpeg = await pidOf(id2, (c) => c.startsWith("ffmpeg") && c.includes("pulse"));
    const killed2 = Date.now();
    process.kill(ffmpeg, "SIGKILL");
    const f = await expectError(e, id2, "audio_failed", { secrets: [call.passcode], since: killed2 });
    assert.ok(f.detectMs < NO_TIMEOUT_BOUND_MS, `audio_failed after ${f.detectMs} ms`);
    // The page was alive: the screenshot shows the call.
    assert.ok(f.evidence.files.includes("screenshot.png"));
  });

  test("a recorder that stops writing (ffmpeg or PulseAudio frozen) is audio_failed, and the file it wrote is kept", async (t) => {
    const e = await env(t);
    for (const [what, match] of [
      ["ffmpeg", (c: string) => c.startsWith("ffmpeg") && c.includes("pulse")],
      ["PulseAudio", (c: string) => c.startsWith("pulseaudio")],
    ] as const) {
      const call = e.fixture.createMeeting({ lobby: false, tone: { frequency: 440 } });
      const id = await join(e, call.joinUrls.meet);
      await waitForSession(e.app, id, (s) => s.status === "recording", 120_000, TOKEN);
      await new Promise((r) => setTimeout(r, 3000));
      const pid = await pidOf(id, match);
      const frozenAt = Date.now();
      process.kill(pid, "SIGSTOP");
      t.after(() => void (() => { try { process.kill(pid, "SIGKILL"); } catch { /* gone */ } })());
      const r = await expectError(e, id, "audio_failed", { secrets: [call.passcode], since: frozenAt, timeoutMs: 90_000 });
      assert.match(String(r.done.error_message), /stopped writing/, what);
      const heard = await hear(String(r.done.recording_file));
      assert.ok(heard.durationSec >= 2, `${what}: ${heard.durationSec} s kept`);
      assert.ok(Math.abs(heard.frequency - 440) <= 10, `${what}: ${heard.frequency} Hz`);
    }
  });
});
