/**
 * A finished session's timeline is kept by the instance that ran it. While that instance is down,
 * another instance answers 503 with `Retry-After` naming where the timeline is (issue #19 with
 * #17), not 404 "never in the call".
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import pg from "pg";
import { providers } from "../harness/databases.ts";
import { MEETING_URL } from "../bot/fixtures/bot-app.ts";
import { clusterDatabase, startInProcessNode, waitFor } from "./fixtures/cluster.ts";

type Json = Record<string, unknown>;

describe("timeline of a session whose instance is down (fake worker)", { skip: !providers().includes("postgresql") && "PostgreSQL only", timeout: 120_000 }, () => {
  test("forwarded while the owner runs; 503 naming the owner and the stored file once it is gone", async (t) => {
    const db = await clusterDatabase(t);
    const a = await startInProcessNode({ db, id: "tl-a" });
    const b = await startInProcessNode({ db, id: "tl-b" });
    const joined = await a.request("POST", "/join", { body: { meeting_url: MEETING_URL, display_name: "timeline bot" } });
    assert.equal(joined.status, 200, joined.text);
    const id = String((joined.body.session as Json).session_id);
    const running = await waitFor(a, id, (s) => s.status === "recording");
    assert.equal((await a.request("POST", `/stop/${id}`)).status, 200);
    const ended = await waitFor(a, id, (s) => s.status === "stopped" && typeof s.timeline_file === "string");
    const [owner, other] = running.instance_id === a.id ? [a, b] : [b, a];
    assert.equal((await other.request("GET", `/sessions/${id}/timeline`)).status, 200, "forwarded to the live owner");

    // The owner goes away; the database still shows its (stale) heartbeat.
    await owner.stop();
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    db.cleanup(() => client.end());
    await client.query(`UPDATE "ClusterInstance" SET "heartbeatAt" = "heartbeatAt" - interval '1 hour' WHERE id = $1`, [owner.id]);

    const away = await other.request("GET", `/sessions/${id}/timeline`);
    assert.equal(away.status, 503, away.text);
    assert.ok(away.headers.get("retry-after"), "Retry-After");
    assert.match(String(away.body.detail), new RegExp(`${owner.id}.*${String(ended.timeline_file).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));

    // A session that never reached the call still answers 404 there.
    assert.equal((await other.request("GET", `/sessions/00000000-0000-4000-8000-000000000000/timeline`)).status, 404);
  });
});
