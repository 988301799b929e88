/**
 * Concurrent retries of one `reference` take no session slot (Rules 4, issue #6): with two slots,
 * twenty retries sent at once and an unrelated join all get 200, one session per reference. They
 * once each took a slot before the unique index sent them back to the first one, and were told
 * 503 "2 sessions are already running", and so was the unrelated join. Against the service as a
 * process of its own, so the requests arrive together as a client's would.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { test } from "node:test";
import { startServiceProcess } from "../harness/service-process.ts";
import { MEETING_URL } from "./fixtures/bot-app.ts";

type Json = Record<string, unknown>;

test("twenty retries of one reference and an unrelated join, two slots: all 200, two sessions", { timeout: 120_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "ref-race-"));
  // Not a reachable meeting: the bots end on their own; only the joins' answers matter here.
  const svc = await startServiceProcess({ DATABASE_URL: `file:${join(dir, "app.db")}`, MAX_CONCURRENT_SESSIONS: "2", WARM_WORKERS: "0" });
  t.after(async () => {
    await svc.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });
  const post = (body: Json) => fetch(`${svc.url}/join`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const retry = { meeting_url: MEETING_URL, reference: "retried" };
  const other = { meeting_url: MEETING_URL, reference: "unrelated" };
  const bodies = [...Array.from({ length: 10 }, () => retry), other, ...Array.from({ length: 10 }, () => retry)];
  const results = await Promise.all(bodies.map(async (b) => { const r = await post(b); return { status: r.status, body: (await r.json()) as Json }; }));
  assert.deepEqual(results.filter((r) => r.status !== 200), [], "every join answered 200");
  const ids = results.map((r) => String((r.body.session as Json).session_id));
  assert.equal(new Set(ids).size, 2, "one session per reference");
  assert.equal(results.filter((r) => /already exists/.test(String(r.body.message))).length, 19);
});
