/**
 * `POST /stop/{id}` "answers 200 with the session" (decisions.md) and echoes `reference`
 * (recorder-bot.md rule 5): the session's own fields are at the top level of the body, for a
 * running and for a finished session alike, and the join-style envelope is there too.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { MEETING_URL, startBotApp, waitForSession } from "./fixtures/bot-app.ts";

type Json = Record<string, unknown>;
const SESSION_FIELDS = ["session_id", "meeting_url", "reference", "display_name", "status", "record", "recording_file", "error_message", "end_reason"];

describe("stop answers with the session", { timeout: 120_000 }, () => {
  test("running and finished: the session at the top level, reference echoed", async (t) => {
    const app = await startBotApp(t);
    const join = await app.request("POST", "/join", { body: { meeting_url: MEETING_URL, reference: "stop-ref" } });
    const id = String(((join.body as Json).session as Json).session_id);
    await waitForSession(app, id, (s) => s.status === "recording");

    for (const round of ["running", "finished"]) {
      const res = await app.request("POST", `/stop/${id}`);
      assert.equal(res.status, 200, res.text);
      const body = res.body as Json;
      for (const key of SESSION_FIELDS) assert.ok(key in body, `${round}: top-level ${key}`);
      assert.equal(body.session_id, id);
      assert.equal(body.reference, "stop-ref");
      assert.equal(body.status, "stopped");
      assert.equal(body.end_reason, "stopped_by_api");
      assert.equal(body.success, true);
      assert.equal(typeof body.message, "string");
      assert.deepEqual(body.session, (await app.request("GET", `/status/${id}`)).body, `${round}: session equals the status`);
    }
  });
});
