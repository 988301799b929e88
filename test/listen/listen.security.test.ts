/**
 * Attack: the listen URL's token is the only credential for a live copy of a meeting's audio.
 * Whoever can open a WebSocket with a guessed, stale, revoked or borrowed token (or with the API
 * bearer instead of it) could eavesdrop; a token that reaches a log line can be replayed by anyone
 * who reads the logs; two consumers racing on one token could both get the stream. Refusals
 * happen before the upgrade (plain HTTP 404/409, never a 101), the token lives only until DELETE
 * or the session's end, and no log line ever holds one.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { request } from "node:http";
import { after, before, describe, test } from "node:test";
import { startBotApp, waitForSession, type BotApp } from "../bot/fixtures/bot-app.ts";
import { startTeamsFixture } from "../fixture/teams/server.ts";
import { holdMediaLock } from "../harness/media-lock.ts";
import { Cleanups } from "../mic/helpers.ts";
import { listen, waitFor, type Json } from "./helpers.ts";

await holdMediaLock();

const TOKEN = "listen-security-access-token";

/** A raw WebSocket upgrade request: the status line and body the server answered with. With
 * `hold`, an upgraded socket stays open until `release()` (else it is closed at once). */
function upgrade(url: string, headers: Record<string, string> = {}, hold = false): Promise<{ status: number; body: string; upgraded: boolean; release(): void }> {
  return new Promise((resolve, reject) => {
    const req = request(url.replace(/^ws/, "http"), {
      headers: { Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": Buffer.alloc(16, 1).toString("base64"), ...headers },
    });
    req.on("upgrade", (res, socket) => {
      if (!hold) socket.destroy();
      resolve({ status: res.statusCode ?? 0, body: "", upgraded: true, release: () => socket.destroy() });
    });
    req.on("response", (res) => {
      let body = "";
      res.on("data", (d: Buffer) => (body += d.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body, upgraded: false, release: () => undefined }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("listen tokens (real worker)", { timeout: 300_000, concurrency: false }, () => {
  const cleanups = new Cleanups();
  after(() => cleanups.run());
  let app: BotApp;
  let id = "";
  const tokens: string[] = [];
  const open = async (): Promise<{ url: string; token: string }> => {
    const res = await app.request("POST", `/audio/${id}/listen`, { body: {}, token: TOKEN });
    assert.equal(res.status, 200, res.text);
    const b = res.body as Json;
    tokens.push(String(b.token));
    return { url: String(b.listen_url), token: String(b.token) };
  };

  before(async () => {
    const fixture = await startTeamsFixture();
    cleanups.context.after(() => fixture.close());
    app = await startBotApp(cleanups.context, { worker: "real", bot: { MEETING_ALLOWED_HOSTS: fixture.hostPort, BOT_ACCESS_TOKEN: TOKEN } });
    const meeting = fixture.createMeeting({ lobby: false });
    const join = await app.request("POST", "/join", { body: { meeting_url: meeting.joinUrl, display_name: "Listen Sec" }, token: TOKEN });
    id = String(((join.body as Json).session as Json).session_id);
    await waitForSession(app, id, (s) => s.status === "recording", 120_000, TOKEN);
  });

  test("a guessed token, another session's path, or the API bearer instead: 404 before any upgrade", async () => {
    const { url, token } = await open();
    const base = url.slice(0, url.lastIndexOf("/"));
    const guessed = await upgrade(`${base}/${"A".repeat(43)}`);
    assert.deepEqual({ status: guessed.status, upgraded: guessed.upgraded }, { status: 404, upgraded: false });
    assert.equal(typeof (JSON.parse(guessed.body) as Json).detail, "string");
    const borrowed = await upgrade(url.replace(id, randomUUID()));
    assert.equal(borrowed.status, 404);
    const bearer = await upgrade(`${base}/${TOKEN}`, { Authorization: `Bearer ${TOKEN}` });
    assert.equal(bearer.status, 404);
    const good = await upgrade(url);
    assert.deepEqual({ status: good.status, upgraded: good.upgraded }, { status: 101, upgraded: true });
    assert.equal((await app.request("DELETE", `/audio/${id}/listen/${token}`, { token: TOKEN })).status, 200);
  });

  test("two consumers racing on one token: exactly one gets the stream, the other 409", async () => {
    const { url, token } = await open();
    const results = await Promise.all([upgrade(url, {}, true), upgrade(url, {}, true), upgrade(url, {}, true)]);
    const statuses = results.map((r) => r.status).sort();
    assert.deepEqual(statuses, [101, 409, 409]);
    for (const r of results) r.release();
    assert.equal((await app.request("DELETE", `/audio/${id}/listen/${token}`, { token: TOKEN })).status, 200);
  });

  test("a revoked token is dead at once, also for the socket that was using it", async () => {
    const { url, token } = await open();
    const r = listen(url);
    await r.opened;
    await waitFor("audio", () => r.frames.length >= 5);
    assert.equal((await app.request("DELETE", `/audio/${id}/listen/${token}`, { token: TOKEN })).status, 200);
    assert.equal((await r.closed).code, 1000);
    assert.equal((await upgrade(url)).status, 404);
    assert.equal((await app.request("DELETE", `/audio/${id}/listen/${token}`, { token: TOKEN })).status, 404);
  });

  test("every token dies with its session; none ever reached a log line", async () => {
    const { url } = await open();
    const r = listen(url);
    await r.opened;
    assert.equal((await app.request("POST", `/stop/${id}`, { token: TOKEN })).status, 200);
    assert.equal((await r.closed).code, 1000);
    assert.equal((await upgrade(url)).status, 404);
    await waitForSession(app, id, (s) => s.status === "stopped", 60_000, TOKEN);
    assert.equal(new Set(tokens).size, tokens.length);
    assert.deepEqual(app.logs.leaks(tokens), []);
    // The DELETE lines name the route with the token blanked.
    assert.ok(app.logs.lines.some((l) => l.includes("/listen/[redacted]")));
  });
});
