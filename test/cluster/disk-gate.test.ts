/**
 * The disk gate in cluster mode (issues #15 and #19), two in-process instances with the fake
 * worker, one of them with a MIN_FREE_DISK_MB no disk can meet: it publishes that it has no room,
 * takes no session, and `/join` answers 507 once the only free slot is on it; with no free slot
 * at all the answer is 503, counted in `toa_bot_joins_refused_total`.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import pg from "pg";
import { providers } from "../harness/databases.ts";
import { MEETING_URL } from "../bot/fixtures/bot-app.ts";
import { bot } from "../../control/metrics/registry.ts";
import { clusterDatabase, startInProcessNode, waitFor } from "./fixtures/cluster.ts";

type Json = Record<string, unknown>;
const refused = async (): Promise<number> => (await bot.refusedJoins.get()).values[0]?.value ?? 0;

describe("cluster disk gate (fake worker)", { skip: !providers().includes("postgresql") && "PostgreSQL only", concurrency: false, timeout: 120_000 }, () => {
  test("an instance without room on disk takes no session; 507 when no free slot has room, 503 (counted) when no slot is free", async (t) => {
    const db = await clusterDatabase(t);
    const pool = new pg.Pool({ connectionString: db.url });
    db.cleanup(() => pool.end());
    const a = await startInProcessNode({ db, id: "disk-a" });
    const b = await startInProcessNode({ db, id: "disk-b", bot: { MIN_FREE_DISK_MB: 50_000_000 } });

    const ready = await b.request("GET", "/readyz");
    assert.equal(ready.status, 503);
    assert.match(String((ready.body.problems as Json).disk), /low disk/);
    const { rows } = await pool.query<{ id: string; diskRoom: boolean }>(`SELECT id, "diskRoom" FROM "ClusterInstance" ORDER BY id`);
    assert.deepEqual(rows, [
      { id: "disk-a", diskRoom: true },
      { id: "disk-b", diskRoom: false },
    ]);

    // Sent to the low-disk instance, run on the other.
    const first = await b.request("POST", "/join", { body: { meeting_url: MEETING_URL, reference: "d1" } });
    assert.equal(first.status, 200, first.text);
    const running = await waitFor(b, String((first.body.session as Json).session_id), (s) => s.status === "recording");
    assert.equal(running.instance_id, "disk-a");

    // The one free slot is on the instance without room: 507, and no session is written.
    const before = await refused();
    const second = await a.request("POST", "/join", { body: { meeting_url: MEETING_URL, reference: "d2" } });
    assert.equal(second.status, 507, second.text);
    assert.match(String(second.body.detail), /disk space/);
    assert.equal(((await a.request("GET", "/sessions")).body.sessions as Json[]).length, 1);
    assert.equal(await refused(), before, "a 507 is not a refusal for capacity");

    // No free slot at all: 503 with Retry-After, counted.
    await b.stop();
    const third = await a.request("POST", "/join", { body: { meeting_url: MEETING_URL, reference: "d3" } });
    assert.equal(third.status, 503, third.text);
    assert.ok(Number(third.headers.get("retry-after")) > 0);
    assert.equal(await refused(), before + 1, "toa_bot_joins_refused_total counts the cluster's 503");
  });
});
