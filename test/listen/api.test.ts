/**
 * The listen API's contract through real HTTP and a real worker (bearer on, playback on, a
 * session that does not record): 409 before the bot is in the call, the answer's fields and
 * defaults, 422 in the decided shape, 404 for an unknown session, a plain GET answered 426, a
 * `record` false session heard all the same, the fifth listener refused; a worker killed outright
 * still ends its listeners with 1000 "session ended"; and the URL rules.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { sessionPaths } from "../../control/bot/paths.ts";
import { listProcesses } from "../../shared/process/group.ts";
import { CLOSE, CLOSE_REASON, listenUrl, parseListenPath } from "../../shared/listen/protocol.ts";
import { startBotApp, waitForSession, type BotApp } from "../bot/fixtures/bot-app.ts";
import { startTeamsFixture, type FixtureMeeting } from "../fixture/teams/server.ts";
import { holdMediaLock } from "../harness/media-lock.ts";
import { Cleanups } from "../mic/helpers.ts";
import { dominantFrequency } from "../helpers/audio/analysis.ts";
import { channel, float, listen, rms, sleep, waitFor, type Json } from "./helpers.ts";

const TOKEN = "listen-api-access-token";

describe("listen URL rules", () => {
  test("ws for http, wss for https, PUBLIC_BASE_URL's path kept; the token comes back out of the path", () => {
    assert.equal(listenUrl("http://127.0.0.1:8000", "s1", "tok"), "ws://127.0.0.1:8000/audio/s1/listen/tok");
    assert.equal(listenUrl("https://bots.example.com/rec/", "s1", "tok"), "wss://bots.example.com/rec/audio/s1/listen/tok");
    assert.deepEqual(parseListenPath("/audio/s1/listen/tok?x=1"), { sessionId: "s1", token: "tok" });
    assert.equal(parseListenPath("/audio/s1/listen"), null);
    assert.equal(parseListenPath("/audio/s1/ingest/tok"), null);
  });
});

await holdMediaLock();

describe("listen API (real worker, bearer, record false, playback on)", { timeout: 300_000, concurrency: false }, () => {
  const cleanups = new Cleanups();
  after(() => cleanups.run());
  let app: BotApp;
  let meeting: FixtureMeeting;
  let id = "";
  /** `token` "" sends no Authorization header. */
  const post = (body?: unknown, sessionId = id, token = TOKEN) => app.request("POST", `/audio/${sessionId}/listen`, { body, token: token || undefined });

  before(async () => {
    const fixture = await startTeamsFixture();
    cleanups.context.after(() => fixture.close());
    app = await startBotApp(cleanups.context, { worker: "real", bot: { MEETING_ALLOWED_HOSTS: fixture.hostPort, BOT_ACCESS_TOKEN: TOKEN, MIC_PLAYBACK_ENABLED: true } });
    meeting = fixture.createMeeting({ lobby: true, tone: { frequency: 440 } });
    const join = await app.request("POST", "/join", { body: { meeting_url: meeting.joinUrl, display_name: "Listen API", record: false }, token: TOKEN });
    assert.equal(join.status, 200, join.text);
    id = String(((join.body as Json).session as Json).session_id);
  });

  test("in the lobby: 409, not in the call", async () => {
    await waitForSession(app, id, (s) => s.status === "lobby", 120_000, TOKEN);
    const res = await post({});
    assert.equal(res.status, 409);
    assert.match(String((res.body as Json).detail), /not in the call/);
    meeting.admit();
    await waitForSession(app, id, (s) => s.status === "connected", 60_000, TOKEN);
  });

  test("bearer required; unknown session 404", async () => {
    assert.equal((await post({}, id, "")).status, 401);
    assert.equal((await post({}, id, "wrong")).status, 401);
    assert.equal((await app.request("DELETE", `/audio/${id}/listen/whatever`)).status, 401);
    const unknown = await post({}, randomUUID());
    assert.equal(unknown.status, 404);
    assert.equal(typeof (unknown.body as Json).detail, "string");
    assert.equal((await app.request("DELETE", `/audio/${randomUUID()}/listen/whatever`, { token: TOKEN })).status, 404);
    assert.equal((await app.request("DELETE", `/audio/${id}/listen/not-a-token`, { token: TOKEN })).status, 404);
  });

  test("a bad body is 422 {detail: [{loc, msg, type}]}", async () => {
    for (const [body, field] of [
      [{ sample_rate: 44100 }, "sample_rate"],
      [{ sample_rate: "16000" }, "sample_rate"],
      [{ channels: 3 }, "channels"],
      [{ events: "yes" }, "events"],
    ] as const) {
      const res = await post(body);
      assert.equal(res.status, 422, JSON.stringify(body));
      const detail = (res.body as { detail: { loc: unknown[]; msg: string; type: string }[] }).detail;
      assert.ok(Array.isArray(detail) && detail.length >= 1);
      assert.deepEqual(detail[0]?.loc, ["body", field]);
      assert.equal(typeof detail[0]?.msg, "string");
      assert.equal(typeof detail[0]?.type, "string");
    }
    const notObject = await post("[1, 2]");
    assert.equal(notObject.status, 422);
  });

  test("defaults: 16 kHz mono s16le with events; the URL names this host; a record-false session is heard", async () => {
    const res = await post(undefined);
    assert.equal(res.status, 200, res.text);
    const b = res.body as Json;
    assert.deepEqual(Object.keys(b).sort(), ["channels", "format", "listen_url", "sample_rate", "session_id", "token"]);
    assert.equal(b.session_id, id);
    assert.equal(b.format, "s16le");
    assert.equal(b.sample_rate, 16000);
    assert.equal(b.channels, 1);
    assert.match(String(b.token), /^[A-Za-z0-9_-]{43}$/);
    assert.equal(b.listen_url, `${app.url.replace(/^http/, "ws")}/audio/${id}/listen/${String(b.token)}`);

    // A plain GET of the URL is not a WebSocket.
    const plain = await fetch(String(b.listen_url).replace(/^ws/, "http"));
    assert.equal(plain.status, 426);

    const r = listen(String(b.listen_url));
    cleanups.context.after(() => r.ws.terminate());
    await r.opened;
    // The call's audio starts flowing up to ~1.5 s after the admission just before this test.
    await waitFor("the tone", () => r.frames.length >= 100 && rms(channel(Buffer.concat(r.frames.slice(-25)), 1)) > 0.05, 30_000);
    assert.deepEqual(r.events[0], { type: "status", status: "connected" });
    const samples = channel(Buffer.concat(r.frames.slice(-25)), 1);
    // The strongest frequency, not zero crossings: a moment of near-silence in the window on a
    // loaded box would add crossings of its noise (a 440 Hz tone once read as 580 Hz).
    const hz = dominantFrequency(float(samples), 16000, { minHz: 100, maxHz: 4000, stepHz: 2 });
    assert.ok(Math.abs(hz - 440) <= 4, `${hz} Hz`);
    assert.equal((await app.request("DELETE", `/audio/${id}/listen/${String(b.token)}`, { token: TOKEN })).status, 200);
    await r.closed;
  });

  test("the fifth concurrent POST is refused: exactly four listeners per session", async () => {
    const answers = await Promise.all(Array.from({ length: 6 }, () => post({ events: false })));
    const statuses = answers.map((a) => a.status).sort();
    assert.deepEqual(statuses, [200, 200, 200, 200, 409, 409]);
    for (const a of answers.filter((x) => x.status === 409)) assert.match(String((a.body as Json).detail), /4 listeners/);
    for (const a of answers.filter((x) => x.status === 200)) {
      assert.equal((await app.request("DELETE", `/audio/${id}/listen/${String((a.body as Json).token)}`, { token: TOKEN })).status, 200);
    }
    assert.equal((await post({})).status, 200, "slots come back after DELETE");
  });

  test("a worker killed outright (SIGKILL) ends its listeners with 1000, session ended", async () => {
    const res = await post({ events: true });
    assert.equal(res.status, 200, res.text);
    const r = listen(String((res.body as Json).listen_url));
    await r.opened;
    await waitFor("audio", () => r.frames.length >= 5);
    const workDir = sessionPaths(app.recordingsDir, id, "wav").workDir;
    const processes = await listProcesses();
    const worker = processes.find((p) => p.cmdline.includes(`--session-dir=${workDir}`));
    assert.ok(worker, "the session's worker process");
    // The sink's tap, or the page tap's check against the sink (which listens only while the
    // page tap's mix is silent: here it holds the tone, so there is none; faults.test.ts kills a
    // worker while it listens). A tap writes into the control plane's socket, not the worker's:
    // none may outlive the worker.
    const taps = processes.filter((p) => p.cmdline.startsWith("parec") && /--stream-name=listen(-check)?\b/.test(p.cmdline) && p.cmdline.includes(workDir));
    process.kill(worker.pid, "SIGKILL");
    assert.deepEqual(await r.closed, { code: CLOSE.normal, reason: CLOSE_REASON.sessionEnded });
    await waitForSession(app, id, (s) => s.status === "interrupted", 60_000, TOKEN);
    const deadline = Date.now() + 10_000;
    while ((await listProcesses()).some((p) => taps.some((t) => t.pid === p.pid))) {
      assert.ok(Date.now() < deadline, "a tap outlived its worker by 10 s");
      await sleep(100);
    }
    assert.equal((await post({})).status, 409);
  });
});
