/**
 * The bot API's answers through HTTP, on both database providers, with the protocol-speaking
 * fake worker (no browser): every refused input in the decided shape, the session fields,
 * the list and its filters, stop on a finished session, and the MAX_CONCURRENT_SESSIONS limit.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { providers } from "../harness/databases.ts";
import { MEETING_URL, startBotApp, waitForSession } from "./fixtures/bot-app.ts";

type Json = Record<string, unknown>;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

for (const provider of providers()) {
  describe(`bot API (${provider})`, { timeout: 180_000 }, () => {
    test("GET / answers name, version, status and the running count without a token", async (t) => {
      const app = await startBotApp(t, { provider, bot: { BOT_ACCESS_TOKEN: "s3cret-token" } });
      const res = await app.request("GET", "/");
      assert.equal(res.status, 200);
      const body = res.body as Json;
      assert.equal(body.status, "ok");
      assert.equal(typeof body.name, "string");
      assert.equal(typeof body.version, "string");
      assert.equal(body.active_sessions, 0);
      const ready = await app.request("GET", "/readyz");
      assert.equal(ready.status, 200, ready.text);
    });

    test("/readyz names a missing Chromium", async (t) => {
      const app = await startBotApp(t, { provider, bot: { CHROMIUM_PATH: "/nonexistent/chromium" } });
      const ready = await app.request("GET", "/readyz");
      assert.equal(ready.status, 503);
      assert.match(String(((ready.body as Json).problems as Json).chromium), /CHROMIUM_PATH/);
    });

    test("bad join bodies answer 422 with a detail list", async (t) => {
      const app = await startBotApp(t, { provider });
      const cases: [unknown, string][] = [
        [{}, "meeting_url"],
        [{ meeting_url: 42 }, "meeting_url"],
        [{ meeting_url: "not a url" }, "meeting_url"],
        [{ meeting_url: "ftp://teams.microsoft.com/meet/1?p=x" }, "meeting_url"],
        [{ meeting_url: "https://evil.example.com/meet/123?p=abc" }, "meeting_url"],
        [{ meeting_url: "https://teams.microsoft.com/somewhere/else" }, "meeting_url"],
        [{ meeting_url: MEETING_URL, reference: "r".repeat(201) }, "reference"],
        [{ meeting_url: MEETING_URL, record: "yes" }, "record"],
        [{ meeting_url: MEETING_URL, display_name: "" }, "display_name"],
      ];
      for (const [body, field] of cases) {
        const res = await app.request("POST", "/join", { body });
        assert.equal(res.status, 422, JSON.stringify(body));
        const detail = (res.body as { detail: { loc: unknown[]; msg: string; type: string }[] }).detail;
        assert.ok(Array.isArray(detail) && detail.length > 0);
        assert.deepEqual(detail[0]?.loc, ["body", field]);
        assert.equal(typeof detail[0]?.msg, "string");
        assert.equal(typeof detail[0]?.type, "string");
      }
      const broken = await app.request("POST", "/join", { body: "{not json", headers: { "content-type": "application/json" } });
      assert.equal(broken.status, 422);
      assert.deepEqual((broken.body as Json).detail, [{ loc: ["body"], msg: "JSON decode error", type: "json_invalid" }]);
      // Valid JSON that is not an object: a wrong type (or, for null, no body), as pydantic says.
      for (const [raw, type] of [['"x"', "model_attributes_type"], ["42", "model_attributes_type"], ["null", "missing"]]) {
        const res = await app.request("POST", "/join", { body: raw, headers: { "content-type": "application/json" } });
        assert.equal(res.status, 422, raw);
        assert.equal(((res.body as Json).detail as Json[])[0]?.type, type, `${raw}: ${res.text}`);
      }
      const sessions = await app.request("GET", "/sessions");
      assert.deepEqual((sessions.body as Json).sessions, [], "no refused join created a session");
    });

    test("a body that is not JSON is a 422, never taken for no body (an optional body's defaults)", async (t) => {
      const app = await startBotApp(t, { provider });
      const cases: [string, string, string][] = [
        ["/join", "text/plain", JSON.stringify({ meeting_url: MEETING_URL })],
        ["/audio/some-session/listen", "text/plain", JSON.stringify({ sample_rate: 8000, channels: 2 })],
        ["/audio/some-session/listen", "application/x-www-form-urlencoded", "sample_rate=8000&channels=2"],
      ];
      for (const [path, type, body] of cases) {
        const res = await app.request("POST", path, { body, headers: { "content-type": type } });
        assert.equal(res.status, 422, `${path} ${type}: ${res.text}`);
        assert.deepEqual((res.body as Json).detail, [{ loc: ["body"], msg: "Input should be a valid dictionary or object to extract fields from", type: "model_attributes_type" }]);
      }
      // No body at all is still the optional body's defaults (here: the unknown session's 404).
      assert.equal((await app.request("POST", "/audio/some-session/listen")).status, 404);
      assert.deepEqual(((await app.request("GET", "/sessions")).body as Json).sessions, []);
    });

    test("a join answers the session; status carries every field; stop ends it", async (t) => {
      const app = await startBotApp(t, { provider, bot: { BOT_DISPLAY_NAME: "Recorder X" } });
      const join = await app.request("POST", "/join", { body: { meeting_url: MEETING_URL, reference: "ref-1" } });
      assert.equal(join.status, 200);
      const jb = join.body as { success: boolean; message: string; session: Json };
      assert.equal(jb.success, true);
      assert.equal(typeof jb.message, "string");
      assert.deepEqual(Object.keys(jb.session).sort(), ["display_name", "meeting_url", "record", "reference", "session_id", "status"]);
      assert.equal(jb.session.display_name, "Recorder X");
      assert.equal(jb.session.reference, "ref-1");
      assert.equal(jb.session.record, true);
      assert.equal(jb.session.status, "joining");
      assert.match(String(jb.session.session_id), /^[0-9a-f-]{36}$/);
      const id = String(jb.session.session_id);

      // Status and participant count arrive as two messages: wait for both.
      const running = await waitForSession(app, id, (s) => s.status === "recording" && s.participant_count === 2);
      for (const key of ["session_id", "meeting_url", "reference", "display_name", "status", "record", "recording_file", "error_message", "created_at", "joined_at", "ended_at", "duration_seconds", "end_reason", "recording_format", "recording_bytes", "participant_count", "instance_id"]) {
        assert.ok(key in running, `status has ${key}`);
      }
      assert.match(String(running.created_at), ISO);
      assert.match(String(running.joined_at), ISO);
      assert.equal(running.ended_at, null);
      assert.equal(running.recording_format, "wav");
      assert.equal(running.participant_count, 2);
      assert.equal(running.instance_id, null, "a single instance records no instance");
      const root = await app.request("GET", "/");
      assert.equal((root.body as Json).active_sessions, 1);

      await new Promise((r) => setTimeout(r, 1000));
      const stop = await app.request("POST", `/stop/${id}`);
      assert.equal(stop.status, 200);
      const stopped = (stop.body as { session: Json }).session;
      assert.equal(stopped.status, "stopped");
      assert.equal(stopped.end_reason, "stopped_by_api");
      assert.match(String(stopped.ended_at), ISO);
      assert.ok(typeof stopped.duration_seconds === "number" && stopped.duration_seconds > 0.5);
      assert.match(String(stopped.recording_file), new RegExp(`${id}_\\d{8}_\\d{6}\\.wav$`));
      assert.ok(Number(stopped.recording_bytes) > 44);

      const again = await app.request("POST", `/stop/${id}`);
      assert.equal(again.status, 200);
      assert.equal(((again.body as Json).session as Json).status, "stopped");
      assert.equal((await app.request("GET", "/")).body && ((await app.request("GET", "/")).body as Json).active_sessions, 0);
    });

    test("unknown sessions answer 404 {detail}", async (t) => {
      const app = await startBotApp(t, { provider });
      for (const [method, path] of [["GET", "/status/00000000-0000-0000-0000-000000000000"], ["POST", "/stop/nope"]] as const) {
        const res = await app.request(method, path);
        assert.equal(res.status, 404);
        assert.equal(typeof (res.body as Json).detail, "string");
      }
    });

    test("record false ends connected → stopped with no file", async (t) => {
      const app = await startBotApp(t, { provider });
      const join = await app.request("POST", "/join", { body: { meeting_url: MEETING_URL, record: false } });
      const id = String(((join.body as Json).session as Json).session_id);
      assert.equal(((join.body as Json).session as Json).record, false);
      await waitForSession(app, id, (s) => s.status === "connected");
      const stop = await app.request("POST", `/stop/${id}`);
      const s = (stop.body as { session: Json }).session;
      assert.equal(s.status, "stopped");
      assert.equal(s.recording_file, null);
    });

    test("the sessions list is newest first and filters by status and reference", async (t) => {
      const app = await startBotApp(t, { provider });
      const ids: string[] = [];
      for (const reference of ["a", "b", null]) {
        const res = await app.request("POST", "/join", { body: { meeting_url: MEETING_URL, reference } });
        ids.push(String(((res.body as Json).session as Json).session_id));
        await new Promise((r) => setTimeout(r, 20));
      }
      await waitForSession(app, ids[0]!, (s) => s.status === "recording");
      await app.request("POST", `/stop/${ids[0]!}`);
      const all = (await app.request("GET", "/sessions")).body as { sessions: Json[] };
      assert.deepEqual(all.sessions.map((s) => s.session_id), [...ids].reverse());
      const byRef = (await app.request("GET", "/sessions?reference=b")).body as { sessions: Json[] };
      assert.deepEqual(byRef.sessions.map((s) => s.session_id), [ids[1]]);
      const stopped = (await app.request("GET", "/sessions?status=stopped")).body as { sessions: Json[] };
      assert.deepEqual(stopped.sessions.map((s) => s.session_id), [ids[0]]);
      const bad = await app.request("GET", "/sessions?status=bogus");
      assert.equal(bad.status, 422);
      assert.deepEqual((bad.body as { detail: { loc: unknown[] }[] }).detail[0]?.loc, ["query", "status"]);
    });

    test("at MAX_CONCURRENT_SESSIONS a join answers 503 with Retry-After", async (t) => {
      const app = await startBotApp(t, { provider, bot: { MAX_CONCURRENT_SESSIONS: 2 } });
      const results = await Promise.all([1, 2, 3, 4].map(() => app.request("POST", "/join", { body: { meeting_url: MEETING_URL } })));
      const codes = results.map((r) => r.status).sort();
      assert.deepEqual(codes, [200, 200, 503, 503]);
      const refused = results.find((r) => r.status === 503)!;
      assert.ok(Number(refused.headers.get("retry-after")) > 0);
      assert.equal(typeof (refused.body as Json).detail, "string");
      const first = results.find((r) => r.status === 200)!;
      const id = String(((first.body as Json).session as Json).session_id);
      await waitForSession(app, id, (s) => s.status === "recording");
      await app.request("POST", `/stop/${id}`);
      const after = await app.request("POST", "/join", { body: { meeting_url: MEETING_URL } });
      assert.equal(after.status, 200, "a slot frees when a session ends");
    });

    test("a worker that cannot start ends the session in error with its message", async (t) => {
      const app = await startBotApp(t, { provider });
      const join = await app.request("POST", "/join", { body: { meeting_url: MEETING_URL, display_name: "fake:initfail", reference: "bad" } });
      const id = String(((join.body as Json).session as Json).session_id);
      const s = await waitForSession(app, id, (x) => x.status === "error");
      assert.equal(s.end_reason, "error");
      assert.match(String(s.error_message), /Chromium could not be started/);
      const retry = await app.request("POST", "/join", { body: { meeting_url: MEETING_URL, reference: "bad" } });
      assert.notEqual(((retry.body as Json).session as Json).session_id, id, "an ended session frees its reference");
    });
  });
}
