/**
 * The bot API as a black-box suite written from recorder-bot.md and decisions.md probes it:
 * unusual but valid bodies, refused ones and the pydantic-style error types, the meeting_url
 * echoed as sent, ids that cannot name a session, methods a path does not serve, repeated stops,
 * and the final `status_changed` webhook carrying the outcome. Fake worker, no browser.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { MEETING_URL, startBotApp, waitForSession } from "./fixtures/bot-app.ts";
import { startReceiver } from "./fixtures/receiver.ts";
import { BOT_SPEC_ROUTES } from "../harness/spec-routes.ts";

type Json = Record<string, unknown>;
type Detail = { loc: (string | number)[]; msg: string; type: string }[];
const TOKEN = "conformance-token";
const MEETUP = "https://teams.microsoft.com/l/meetup-join/19%3ameeting_abc%40thread.v2/0?context=%7b%22Tid%22%3a%22t%22%7d";

describe("bot API conformance", { timeout: 120_000 }, () => {
  test("join bodies: extra fields ignored, defaults applied, refusals typed like pydantic", async (t) => {
    const app = await startBotApp(t, { bot: { BOT_ACCESS_TOKEN: TOKEN, BOT_DISPLAY_NAME: "Recorder Y" } });
    const ok = await app.request("POST", "/join", { token: TOKEN, body: { meeting_url: MEETING_URL, unknown_field: 1, reference: "r".repeat(200) } });
    assert.equal(ok.status, 200, ok.text);
    const session = (ok.body as { session: Json }).session;
    assert.equal(session.display_name, "Recorder Y", "display_name defaults to BOT_DISPLAY_NAME");
    assert.equal(session.record, true);
    assert.equal(session.reference, "r".repeat(200));
    assert.ok(!("unknown_field" in session));

    const cases: [unknown, (string | number)[], string][] = [
      [{}, ["body", "meeting_url"], "missing"],
      [{ meeting_url: MEETING_URL, record: "yes" }, ["body", "record"], "bool_type"],
      [{ meeting_url: MEETING_URL, record: "true" }, ["body", "record"], "bool_type"],
      [{ meeting_url: MEETING_URL, reference: "r".repeat(201) }, ["body", "reference"], "string_too_long"],
      [{ meeting_url: MEETING_URL, display_name: 7 }, ["body", "display_name"], "string_type"],
      [{ meeting_url: "https://evil.example.com/meet/1?p=x" }, ["body", "meeting_url"], "value_error"],
      [[], ["body"], "dict_type"],
    ];
    for (const [body, loc, type] of cases) {
      const res = await app.request("POST", "/join", { token: TOKEN, body });
      assert.equal(res.status, 422, JSON.stringify(body));
      const detail = (res.body as { detail: Detail }).detail;
      assert.deepEqual(detail[0]?.loc, loc, JSON.stringify(body));
      assert.equal(detail[0]?.type, type, JSON.stringify(body));
    }
    const none = await app.request("POST", "/join", { token: TOKEN });
    assert.equal(none.status, 422);
    assert.equal((none.body as { detail: Detail }).detail[0]?.type, "missing", "an empty body misses the required fields");
    const missing = await app.request("POST", "/join", { token: TOKEN, body: { display_name: "x" } });
    assert.deepEqual((missing.body as { detail: Detail }).detail, [{ loc: ["body", "meeting_url"], msg: "Field required", type: "missing" }]);
  });

  test("refusals outside a JSON body are typed like pydantic too: bounds, literals, text booleans, unknown keys one by one", async (t) => {
    const app = await startBotApp(t, { bot: { BOT_ACCESS_TOKEN: TOKEN } });
    const detailOf = async (method: "GET" | "POST", path: string, body?: unknown): Promise<Detail> => {
      const res = await app.request(method, path, { token: TOKEN, body });
      assert.equal(res.status, 422, `${method} ${path} ${res.text}`);
      return (res.body as { detail: Detail }).detail;
    };
    const id = "00000000-0000-4000-8000-000000000000";
    // A query's number arrives as text but is bounded as a number.
    assert.equal((await detailOf("GET", "/sessions?limit=0"))[0]?.type, "greater_than_equal");
    assert.equal((await detailOf("GET", "/sessions?limit=1001"))[0]?.type, "less_than_equal");
    assert.deepEqual(await detailOf("POST", `/audio/${id}/listen`, { sample_rate: 44100 }), [
      { loc: ["body", "sample_rate"], msg: "Input should be 8000, 16000, 24000 or 48000", type: "literal_error" },
    ]);
    assert.equal((await detailOf("POST", `/audio/${id}/listen`, { channels: 3 }))[0]?.type, "literal_error");
    assert.deepEqual(await detailOf("POST", `/audio/${id}/stop?mute_after=maybe`), [
      { loc: ["query", "mute_after"], msg: "Input should be a valid boolean, unable to interpret input", type: "bool_parsing" },
    ]);
    assert.deepEqual(await detailOf("POST", "/join", { meeting_url: MEETING_URL, automatic_leave: { foo: 1, bar: 2 } }), [
      { loc: ["body", "automatic_leave", "foo"], msg: "Extra inputs are not permitted", type: "extra_forbidden" },
      { loc: ["body", "automatic_leave", "bar"], msg: "Extra inputs are not permitted", type: "extra_forbidden" },
    ]);
  });

  test("meeting_url is echoed as sent (case, meetup-join context) on join, status and list", async (t) => {
    const app = await startBotApp(t);
    for (const sent of [MEETUP, "https://TEAMS.Microsoft.com/meet/42?p=x"]) {
      const res = await app.request("POST", "/join", { body: { meeting_url: sent } });
      assert.equal(res.status, 200, res.text);
      const session = (res.body as { session: Json }).session;
      assert.equal(session.meeting_url, sent);
      const status = await app.request("GET", `/status/${String(session.session_id)}`);
      assert.equal((status.body as Json).meeting_url, sent);
      const list = await app.request("GET", `/sessions`);
      assert.ok((list.body as { sessions: Json[] }).sessions.some((s) => s.meeting_url === sent));
    }
  });

  test("a JSON body sent without Content-Type is read as JSON", async (t) => {
    const app = await startBotApp(t);
    const res = await fetch(`${app.url}/join`, { method: "POST", body: new TextEncoder().encode(JSON.stringify({ meeting_url: MEETING_URL, reference: "no-ct" })) });
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(((await res.json()) as { session: Json }).session.reference, "no-ct");
  });

  test("ids that name no session answer 404 {detail}, never 422 or 500", async (t) => {
    const app = await startBotApp(t, { bot: { BOT_ACCESS_TOKEN: TOKEN } });
    for (const id of ["not-a-uuid", "%ZZ", "00000000-0000-0000-0000-000000000000", "x".repeat(300), "..%2F..%2Fetc"]) {
      for (const [method, path] of [["GET", `/status/${id}`], ["POST", `/stop/${id}`]] as const) {
        const res = await app.request(method, path, { token: TOKEN });
        assert.equal(res.status, 404, `${method} ${path}: ${res.text}`);
        assert.equal(typeof (res.body as Json).detail, "string");
      }
    }
  });

  test("a known path asked with another method answers 405 {detail} with Allow", async (t) => {
    const app = await startBotApp(t, { bot: { BOT_ACCESS_TOKEN: TOKEN } });
    const cases: [string, string, string][] = [
      ["GET", "/join", "POST"],
      ["PUT", "/join", "POST"],
      ["DELETE", "/status/abc", "GET, HEAD"],
      ["GET", "/stop/abc", "POST"],
      ["POST", "/sessions", "GET, HEAD"],
      ["DELETE", "/", "GET, HEAD"],
    ];
    for (const [method, path, allow] of cases) {
      const res = await app.request(method, path, { token: TOKEN });
      assert.equal(res.status, 405, `${method} ${path}`);
      assert.equal(res.headers.get("allow"), allow, `${method} ${path}`);
      assert.equal(typeof (res.body as Json).detail, "string");
    }
    assert.equal((await app.request("GET", "/no-such-route", { token: TOKEN })).status, 404);
    assert.equal((await app.request("GET", "/sessions/", { token: TOKEN })).status, 200, "a trailing slash is the same route");
  });

  test("/openapi.json names each bot route exactly as the spec writes it ({session_id}, {token})", async (t) => {
    const app = await startBotApp(t);
    const doc = (await app.request("GET", "/openapi.json")).body as { paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>> };
    for (const [method, path] of BOT_SPEC_ROUTES) {
      const op = doc.paths[path]?.[method];
      assert.ok(op, `${method.toUpperCase()} ${path} documented`);
      const names = (op.parameters ?? []).filter((p) => p.in === "path").map((p) => p.name);
      assert.deepEqual(names, [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]), `${method.toUpperCase()} ${path} path parameters`);
    }
  });

  test("/openapi.json says what the routes do: optional bodies, the upload's file part, every refusal's body, Retry-After", async (t) => {
    const app = await startBotApp(t);
    type Op = { requestBody?: { required: boolean; content: Record<string, { schema: { properties?: Record<string, Json>; required?: string[] } }> }; responses: Record<string, Json> };
    const doc = (await app.request("GET", "/openapi.json")).body as { paths: Record<string, Record<string, Op>>; components: { schemas: Record<string, Json> } };
    const op = (path: string, method = "post"): Op => doc.paths[path]![method]!;
    assert.equal(op("/audio/{session_id}/listen").requestBody?.required, false, "listen's body is optional");
    assert.equal(op("/join").requestBody?.required, true);
    const form = op("/audio/{session_id}/play/upload").requestBody!.content["multipart/form-data"]!.schema;
    assert.equal(form.properties?.file?.format, "binary", JSON.stringify(form));
    assert.ok(form.required?.includes("file"));
    assert.deepEqual([form.properties?.volume?.minimum, form.properties?.volume?.maximum], [0, 2]);
    const ref = (path: string, status: number, method = "post") => ((op(path, method).responses[status]!.content as Record<string, { schema: { $ref: string } }>)["application/json"]!.schema.$ref);
    assert.equal(ref("/join", 422), "#/components/schemas/ValidationError");
    assert.equal(ref("/join", 503), "#/components/schemas/Detail");
    assert.ok((op("/join").responses[503]!.headers as Json)["Retry-After"], "503 declares Retry-After");
    assert.equal(ref("/status/{session_id}", 404, "get"), "#/components/schemas/Detail");
    assert.ok(doc.components.schemas.ValidationError && doc.components.schemas.Detail);
    assert.match(String(op("/audio/{session_id}/play").responses[404]!.description), /MEDIA_DIR/);
  });

  test("closing the stream of a session no longer in the call answers 409 {detail}, like every audio request", async (t) => {
    const app = await startBotApp(t, { bot: { MIC_PLAYBACK_ENABLED: true } });
    const join = await app.request("POST", "/join", { body: { meeting_url: MEETING_URL } });
    const id = String(((join.body as Json).session as Json).session_id);
    await waitForSession(app, id, (s) => s.status === "recording");
    assert.equal((await app.request("POST", `/audio/${id}/stream`, { body: {} })).status, 200);
    assert.equal((await app.request("DELETE", `/audio/${id}/stream`)).status, 200, "in the call: closed");
    assert.equal((await app.request("POST", `/stop/${id}`)).status, 200);
    await waitForSession(app, id, (s) => s.status === "stopped");
    for (const [method, path] of [["DELETE", `/audio/${id}/stream`], ["POST", `/audio/${id}/stream`], ["POST", `/audio/${id}/stop`]] as const) {
      const res = await app.request(method, path);
      assert.equal(res.status, 409, `${method} ${path}: ${res.text}`);
      assert.equal(typeof (res.body as Json).detail, "string");
    }
  });

  test("stop twice answers 200 both times with the same final session; the final status_changed carries the outcome", async (t) => {
    const receiver = await startReceiver();
    t.after(() => receiver.close());
    const app = await startBotApp(t, { bot: { WEBHOOK_URL: receiver.url, WEBHOOK_EVENTS: true } });
    const join = await app.request("POST", "/join", { body: { meeting_url: MEETING_URL, reference: "twice" } });
    const id = String(((join.body as Json).session as Json).session_id);
    await waitForSession(app, id, (s) => s.status === "recording");
    const [first, second] = await Promise.all([app.request("POST", `/stop/${id}`), app.request("POST", `/stop/${id}`)]);
    assert.equal(first.status, 200);
    assert.equal(second.status, 200);
    const third = await app.request("POST", `/stop/${id}`);
    assert.equal(third.status, 200);
    const final = (third.body as { session: Json }).session;
    assert.equal(final.status, "stopped");
    assert.equal(final.end_reason, "stopped_by_api");
    assert.equal(final.reference, "twice");

    const changed = await receiver.waitFor((e) => e.event === "status_changed" && e.status === "stopped" && e.session_id === id);
    const finished = await receiver.waitFor((e) => e.event === "finished" && e.session_id === id);
    assert.equal(changed.end_reason, "stopped_by_api");
    assert.equal(changed.recording_file, final.recording_file);
    assert.equal(changed.reference, "twice");
    assert.equal(finished.recording_file, final.recording_file);
    const mid = receiver.events.filter((e) => e.session_id === id && e.event === "status_changed" && e.status !== "stopped");
    assert.ok(mid.length > 0 && mid.every((e) => e.end_reason === null && e.recording_file === null), "running changes carry no outcome yet");
  });
});
