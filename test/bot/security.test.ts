/**
 * Attacks on the bot API. (1) Without the access token nobody may send a bot, read sessions or
 * stop one: every protected route answers 401, a wrong or differently-sized token included,
 * while GET / and the docs stay open. (2) A client retrying /join with one reference, or an
 * attacker hammering it in parallel, must not multiply bots in a meeting: racing joins with one
 * reference create exactly one session.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { providers } from "../harness/databases.ts";
import { MEETING_URL, startBotApp, waitForSession } from "./fixtures/bot-app.ts";

type Json = Record<string, unknown>;
const TOKEN = "bot-token-0123456789";

for (const provider of providers()) {
  describe(`bot API security (${provider})`, { timeout: 180_000 }, () => {
    test("BOT_ACCESS_TOKEN guards every session route", async (t) => {
      const app = await startBotApp(t, { provider, bot: { BOT_ACCESS_TOKEN: TOKEN } });
      const guarded: [string, string, unknown?][] = [
        ["POST", "/join", { meeting_url: MEETING_URL }],
        ["GET", "/status/00000000-0000-0000-0000-000000000000"],
        ["POST", "/stop/00000000-0000-0000-0000-000000000000"],
        ["GET", "/sessions"],
      ];
      for (const [method, path, body] of guarded) {
        for (const headers of [{} as Record<string, string>, { authorization: `Bearer ${TOKEN}x` }, { authorization: "Bearer x" }, { authorization: TOKEN }, { authorization: `Basic ${TOKEN}` }]) {
          const res = await app.request(method, path, { body, headers });
          assert.equal(res.status, 401, `${method} ${path} ${JSON.stringify(headers)}`);
          assert.equal(typeof (res.body as Json).detail, "string");
        }
      }
      // Validation never runs before authentication: a bad body without a token is still 401.
      assert.equal((await app.request("POST", "/join", { body: {} })).status, 401);
      for (const path of ["/", "/docs", "/openapi.json", "/healthz"]) {
        assert.equal((await app.request("GET", path)).status, 200, path);
      }
      const ok = await app.request("GET", "/sessions", { token: TOKEN });
      assert.equal(ok.status, 200);
      const lower = await app.request("GET", "/sessions", { headers: { authorization: `bearer ${TOKEN}` } });
      assert.equal(lower.status, 200, "the scheme name is case-insensitive (RFC 7235)");
      assert.deepEqual(app.logs.leaks([TOKEN]), [], "the token never reaches a log line");
    });

    test("without BOT_ACCESS_TOKEN the API is open and startup warns", async (t) => {
      const app = await startBotApp(t, { provider });
      assert.equal((await app.request("GET", "/sessions")).status, 200);
      assert.ok(app.logs.lines.some((l) => l.includes("BOT_ACCESS_TOKEN is not set")));
    });

    test("five concurrent joins with one reference send one bot", async (t) => {
      const app = await startBotApp(t, { provider, bot: { BOT_ACCESS_TOKEN: TOKEN } });
      const body = { meeting_url: MEETING_URL, reference: "meeting-42" };
      const results = await Promise.all([1, 2, 3, 4, 5].map(() => app.request("POST", "/join", { body, token: TOKEN })));
      assert.deepEqual(results.map((r) => r.status), [200, 200, 200, 200, 200]);
      const ids = new Set(results.map((r) => ((r.body as Json).session as Json).session_id));
      assert.equal(ids.size, 1, "one session for one reference");
      const messages = results.map((r) => String((r.body as Json).message));
      assert.equal(messages.filter((m) => /already/i.test(m)).length, 4, "four answers say the session already exists");
      const list = (await app.request("GET", "/sessions?reference=meeting-42", { token: TOKEN })).body as { sessions: Json[] };
      assert.equal(list.sessions.length, 1);
      assert.equal(((await app.request("GET", "/")).body as Json).active_sessions, 1, "one worker runs");

      const id = String([...ids][0]);
      await waitForSession(app, id, (s) => s.status === "recording", 60_000, TOKEN);
      const retry = await app.request("POST", "/join", { body, token: TOKEN });
      assert.equal(((retry.body as Json).session as Json).session_id, id, "a retry while active returns the same session");
      await app.request("POST", `/stop/${id}`, { token: TOKEN });
      const fresh = await app.request("POST", "/join", { body, token: TOKEN });
      assert.notEqual(((fresh.body as Json).session as Json).session_id, id, "after the end the reference is free");
    });
  });
}
