/**
 * Issue #15 "Nothing grows without bound": `GET /sessions` answers in pages, newest first:
 * `limit` (default 100, at most 1000) and `cursor` (the previous page's `next_cursor`, null on the
 * last page); every session once, none twice, also when a new one arrives between pages.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { MEETING_URL, startBotApp, waitForSession } from "../bot/fixtures/bot-app.ts";

type Json = Record<string, unknown>;
type Page = { sessions: Json[]; next_cursor: string | null };

test("GET /sessions pages with limit and cursor, newest first", { timeout: 120_000 }, async (t) => {
  const app = await startBotApp(t);
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    const join = await app.request("POST", "/join", { body: { meeting_url: MEETING_URL, display_name: `Bot ${i}`, record: false } });
    const id = String(((join.body as Json).session as Json).session_id);
    ids.push(id);
    await waitForSession(app, id, (s) => s.status === "connected");
    await app.request("POST", `/stop/${id}`);
  }
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res = await app.request("GET", `/sessions?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const page = res.body as Page;
    assert.ok(page.sessions.length <= 2);
    seen.push(...page.sessions.map((s) => String(s.session_id)));
    if (pages === 0) {
      // A session created after the first page does not shift the ones still to come.
      const late = await app.request("POST", "/join", { body: { meeting_url: MEETING_URL, display_name: "Late", record: false } });
      const lateId = String(((late.body as Json).session as Json).session_id);
      await waitForSession(app, lateId, (s) => s.status === "connected");
      await app.request("POST", `/stop/${lateId}`);
    }
    cursor = page.next_cursor;
    pages++;
  } while (cursor !== null && pages < 10);
  assert.equal(pages, 3);
  assert.deepEqual(seen, [...ids].reverse());
  const all = (await app.request("GET", "/sessions")).body as Page;
  assert.equal(all.sessions.length, 6);
  assert.equal(all.next_cursor, null);
  assert.equal((await app.request("GET", "/sessions?limit=0")).status, 422);
  assert.equal((await app.request("GET", "/sessions?limit=1001")).status, 422);
  assert.equal((await app.request("GET", "/sessions?cursor=bm9wZQ")).status, 422);
});
