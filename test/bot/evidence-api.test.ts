/**
 * Issue #16 through HTTP on both providers with the protocol-speaking fake worker: the evidence
 * routes (listing, content types, no way out of the session's folder), EVIDENCE_RETENTION_DAYS,
 * error_code `internal` for a failure nobody named, and automatic_leave's validation and echo.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { ERROR_CODES } from "../../shared/recording/error-codes.ts";
import { providers } from "../harness/databases.ts";
import { MEETING_URL, startBotApp, waitForSession } from "./fixtures/bot-app.ts";
import { startReceiver } from "./fixtures/receiver.ts";

type Json = Record<string, unknown>;

for (const provider of providers()) {
  describe(`evidence and automatic_leave API (${provider})`, { timeout: 180_000 }, () => {
    test("evidence: listing, content types, 404 for anything outside the folder, 409 for a live capture of a finished session", async (t) => {
      const app = await startBotApp(t, { provider });
      const joined = await app.request("POST", "/join", { body: { meeting_url: MEETING_URL } });
      const id = String(((joined.body as Json).session as Json).session_id);
      await waitForSession(app, id, (s) => s.status === "recording");
      await app.request("POST", `/stop/${id}`);
      await waitForSession(app, id, (s) => s.status === "stopped");

      const dir = join(app.recordingsDir, ".evidence", id);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, "steps.json"), JSON.stringify({ steps: [{ at: new Date().toISOString(), stage: "joining" }] }));
      writeFileSync(join(dir, "page.html"), "<!doctype html><html><body><p>hi</p></body></html>");
      writeFileSync(join(dir, "console.log"), "line\n");
      writeFileSync(join(dir, ".hidden"), "no");
      writeFileSync(join(app.recordingsDir, "outside.txt"), "secret outside");
      symlinkSync("/etc/passwd", join(dir, "passwd.txt"));

      const list = await app.request("GET", `/sessions/${id}/evidence`);
      assert.equal(list.status, 200, list.text);
      const files = (list.body as { files: Json[] }).files;
      assert.deepEqual(files.map((f) => f.name), ["console.log", "page.html", "steps.json"]);
      for (const f of files) assert.ok(typeof f.bytes === "number" && typeof f.created_at === "string");

      const types: Record<string, RegExp> = { "steps.json": /^application\/json/, "page.html": /^text\/html/, "console.log": /^text\/plain/ };
      for (const [name, type] of Object.entries(types)) {
        const res = await app.request("GET", `/sessions/${id}/evidence/${name}`);
        assert.equal(res.status, 200, name);
        assert.match(res.headers.get("content-type") ?? "", type);
        assert.equal(res.headers.get("x-content-type-options"), "nosniff");
      }
      assert.match((await app.request("GET", `/sessions/${id}/evidence/page.html`)).headers.get("content-security-policy") ?? "", /sandbox/);
      for (const bad of ["..%2Foutside.txt", "..%2F..%2F..%2Fetc%2Fpasswd", "%2e%2e", ".hidden", "passwd.txt", "nope.png", "..%5Coutside.txt"]) {
        const res = await app.request("GET", `/sessions/${id}/evidence/${bad}`);
        assert.equal(res.status, 404, `${bad}: ${res.status} ${res.text}`);
        assert.doesNotMatch(res.text, /secret outside|root:/);
      }
      assert.equal((await app.request("GET", `/sessions/${randomUUID()}/evidence`)).status, 404);
      assert.equal((await app.request("POST", `/sessions/${randomUUID()}/evidence`)).status, 404);
      assert.equal((await app.request("POST", `/sessions/${id}/evidence`)).status, 409);
    });

    test("the OpenAPI document lists the evidence routes, error_code's closed list and automatic_leave", async (t) => {
      const app = await startBotApp(t, { provider });
      const doc = (await app.request("GET", "/openapi.json")).body as { paths: Record<string, Record<string, unknown>> };
      assert.ok(doc.paths["/sessions/{session_id}/evidence"]?.get && doc.paths["/sessions/{session_id}/evidence"]?.post);
      assert.ok(doc.paths["/sessions/{session_id}/evidence/{name}"]?.get);
      const text = JSON.stringify(doc.paths["/status/{session_id}"]);
      for (const code of ERROR_CODES) assert.ok(text.includes(`"${code}"`), code);
      assert.ok(JSON.stringify(doc.paths["/join"]).includes("silence_activate_after_minutes"));
    });

    test("EVIDENCE_RETENTION_DAYS: folders older than it are deleted at start, newer ones kept", async (t) => {
      const recordingsDir = mkdtempSync(join(tmpdir(), "bot-rec-"));
      t.after(() => rmSync(recordingsDir, { recursive: true, force: true }));
      const old = join(recordingsDir, ".evidence", randomUUID());
      const fresh = join(recordingsDir, ".evidence", randomUUID());
      for (const d of [old, fresh]) {
        mkdirSync(d, { recursive: true });
        writeFileSync(join(d, "steps.json"), "{}");
      }
      const threeDaysAgo = new Date(Date.now() - 3 * 86_400_000);
      utimesSync(join(old, "steps.json"), threeDaysAgo, threeDaysAgo);
      utimesSync(old, threeDaysAgo, threeDaysAgo);
      await startBotApp(t, { provider, recordingsDir, bot: { EVIDENCE_RETENTION_DAYS: 2 } });
      const deadline = Date.now() + 10_000;
      while (existsSync(old) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      assert.equal(existsSync(old), false, "the old folder is gone");
      assert.equal(existsSync(fresh), true, "the recent folder stays");
    });

    test("a failure the worker did not name ends with error_code internal; other ends carry null", async (t) => {
      const receiver = await startReceiver();
      t.after(() => receiver.close());
      const app = await startBotApp(t, { provider, bot: { WEBHOOK_URL: receiver.url } });
      const failed = await app.request("POST", "/join", { body: { meeting_url: MEETING_URL, display_name: "fake:initfail" } });
      const id = String(((failed.body as Json).session as Json).session_id);
      const done = await waitForSession(app, id, (s) => s.status === "error");
      assert.equal(done.error_code, "internal");
      assert.equal((await receiver.waitFor((e) => e.event === "finished" && e.session_id === id)).error_code, "internal");

      const ok = await app.request("POST", "/join", { body: { meeting_url: MEETING_URL } });
      const id2 = String(((ok.body as Json).session as Json).session_id);
      await waitForSession(app, id2, (s) => s.status === "recording");
      await app.request("POST", `/stop/${id2}`);
      const stopped = await waitForSession(app, id2, (s) => s.status === "stopped");
      assert.equal(stopped.error_code, null);
      assert.equal(stopped.automatic_leave, null);
      const hook = await receiver.waitFor((e) => e.event === "finished" && e.session_id === id2);
      assert.equal(hook.error_code, null);
      assert.equal(hook.automatic_leave, null);
      assert.ok(Array.isArray(hook.evidence_files));
    });

    test("automatic_leave: every bad value answers 422 naming the field; a good one is echoed on status, list and webhook", async (t) => {
      const receiver = await startReceiver();
      t.after(() => receiver.close());
      const app = await startBotApp(t, { provider, bot: { MAX_RECORDING_MINUTES: 60, WEBHOOK_URL: receiver.url } });
      const bad: Array<[unknown, (string | number)[]]> = [
        ["soon", ["automatic_leave"]],
        [{ lobby_wait_minutes: 0 }, ["automatic_leave", "lobby_wait_minutes"]],
        [{ lobby_wait_minutes: 241 }, ["automatic_leave", "lobby_wait_minutes"]],
        [{ lobby_wait_minutes: "5" }, ["automatic_leave", "lobby_wait_minutes"]],
        [{ alone_seconds: 0 }, ["automatic_leave", "alone_seconds"]],
        [{ alone_seconds: 3601 }, ["automatic_leave", "alone_seconds"]],
        [{ alone_seconds: 2.5 }, ["automatic_leave", "alone_seconds"]],
        [{ silence_minutes: -1 }, ["automatic_leave", "silence_minutes"]],
        [{ silence_activate_after_minutes: -1 }, ["automatic_leave", "silence_activate_after_minutes"]],
        [{ max_duration_minutes: 61 }, ["automatic_leave", "max_duration_minutes"]],
        [{ max_duration_minutes: 0 }, ["automatic_leave", "max_duration_minutes"]],
        [{ bot_names: "notetaker" }, ["automatic_leave", "bot_names"]],
        [{ bot_names: [""] }, ["automatic_leave", "bot_names", 0]],
        [{ leave_when: "bored" }, ["automatic_leave"]],
      ];
      for (const [value, loc] of bad) {
        const res = await app.request("POST", "/join", { body: { meeting_url: MEETING_URL, automatic_leave: value } });
        assert.equal(res.status, 422, `${JSON.stringify(value)}: ${res.text}`);
        const detail = (res.body as { detail: Array<{ loc: unknown[] }> }).detail;
        assert.ok(detail.some((d) => JSON.stringify(d.loc.slice(1, 1 + loc.length)) === JSON.stringify(loc) && d.loc[0] === "body"), `${JSON.stringify(value)}: ${JSON.stringify(detail)}`);
      }
      const rules = { lobby_wait_minutes: 5, alone_seconds: 10, silence_minutes: 3, silence_activate_after_minutes: 1, max_duration_minutes: 30, bot_names: ["notetaker", "Fireflies"] };
      const res = await app.request("POST", "/join", { body: { meeting_url: MEETING_URL, automatic_leave: rules } });
      assert.equal(res.status, 200, res.text);
      const id = String(((res.body as Json).session as Json).session_id);
      const running = await waitForSession(app, id, (s) => s.status === "recording");
      assert.deepEqual(running.automatic_leave, rules);
      const list = await app.request("GET", `/sessions?status=recording`);
      assert.deepEqual(((list.body as { sessions: Json[] }).sessions.find((s) => s.session_id === id) ?? {}).automatic_leave, rules);
      await app.request("POST", `/stop/${id}`);
      const hook = await receiver.waitFor((e) => e.event === "finished" && e.session_id === id);
      assert.deepEqual(hook.automatic_leave, rules);
    });
  });
}
