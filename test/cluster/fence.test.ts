/**
 * Instances cut off from PostgreSQL while their bots run on (issue #19 "Liveness and takeover"),
 * two in-process instances with the fake worker, each reaching the database through a TCP relay
 * the test can cut:
 * - one instance cut off for longer than DEAD_AFTER_MS: the other marks its session `interrupted`
 *   (`instance_lost`); once the cut-off one reaches the database again its bot leaves, and that end
 *   stands: one `status_changed`, one `finished` (`interrupted`), no later status;
 * - the database itself gone for as long, for every instance, and back for one a little before the
 *   other: nobody's session is taken over.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { providers } from "../harness/databases.ts";
import { MEETING_URL } from "../bot/fixtures/bot-app.ts";
import { startReceiver } from "../bot/fixtures/receiver.ts";
import { CLUSTER_SECRET, clusterDatabase, startInProcessNode, waitFor, type ClusterDatabase, type InProcessNode } from "./fixtures/cluster.ts";
import { startTcpProxy, type TcpProxy } from "./fixtures/tcp-proxy.ts";
import { DEAD_AFTER_MS, HEARTBEAT_INTERVAL_MS, INTERNAL_PREFIX, SECRET_HEADER, TAKEOVER_SWEEP_MS } from "../../shared/cluster/protocol.ts";

type Json = Record<string, unknown>;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Longer than DEAD_AFTER_MS: long enough to be taken for dead. */
const CUT_MS = DEAD_AFTER_MS + 6_000;

async function nodeBehindProxy(db: ClusterDatabase, id: string, webhookUrl: string): Promise<{ node: InProcessNode; proxy: TcpProxy }> {
  const target = new URL(db.url);
  const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  const node = await startInProcessNode({ db, id, databaseUrl: proxy.through(db.url), bot: { WEBHOOK_URL: webhookUrl, WEBHOOK_EVENTS: true } });
  // The relay goes last: the instance stops (and its pool ends) while it still passes traffic.
  db.cleanup(() => proxy.close());
  db.cleanup(() => proxy.restore());
  return { node, proxy };
}

/** Two joins through `a`: one runs on each instance (MAX_CONCURRENT_SESSIONS 1). */
async function oneEach(a: InProcessNode): Promise<Map<string, string>> {
  const ids: string[] = [];
  for (const reference of ["one", "two"]) {
    const res = await a.request("POST", "/join", { body: { meeting_url: MEETING_URL, reference } });
    assert.equal(res.status, 200, res.text);
    ids.push(String((res.body.session as Json).session_id));
  }
  const running = await Promise.all(ids.map((id) => waitFor(a, id, (s) => s.status === "recording")));
  return new Map(running.map((s) => [String(s.instance_id), String(s.session_id)]));
}

describe("instances cut off from the database (fake worker)", { skip: !providers().includes("postgresql") && "PostgreSQL only", concurrency: false, timeout: 180_000 }, () => {
  test("cut off past DEAD_AFTER: taken over; back, its bot leaves and the announced end stands", async (t) => {
    const db = await clusterDatabase(t);
    const receiver = await startReceiver();
    db.cleanup(() => receiver.close());
    const { node: a } = await nodeBehindProxy(db, "fence-a", receiver.url);
    const { node: b, proxy } = await nodeBehindProxy(db, "fence-b", receiver.url);
    const sessions = await oneEach(a);
    const onB = sessions.get("fence-b")!;
    const onA = sessions.get("fence-a")!;

    const cutAt = Date.now();
    proxy.cut();
    const lost = await waitFor(a, onB, (s) => s.status === "interrupted", DEAD_AFTER_MS + 30_000);
    assert.equal(lost.end_reason, "instance_lost");
    // Ended when b was last heard of (its last heartbeat before the cut), not when a noticed.
    const endedAt = Date.parse(String(lost.ended_at));
    assert.ok(endedAt <= cutAt + 500 && endedAt >= cutAt - HEARTBEAT_INTERVAL_MS - 1_000, `ended ${String(lost.ended_at)}, cut ${new Date(cutAt).toISOString()}`);
    proxy.restore();
    const finished = await receiver.waitFor((e) => e.event === "finished" && e.session_id === onB, 30_000);
    assert.equal(finished.status, "interrupted", JSON.stringify(finished));
    assert.equal(finished.end_reason, "instance_lost");
    // The row kept the end the cluster announced, and b's bot is gone.
    await sleep(3000);
    const after = await waitFor(b, onB, () => true);
    assert.equal(after.status, "interrupted");
    assert.equal(after.end_reason, "instance_lost");
    assert.equal(after.ended_at, lost.ended_at, "the announced end time stands");
    const mine = receiver.events.filter((e) => e.session_id === onB);
    assert.deepEqual(
      mine.filter((e) => e.event === "status_changed").map((e) => e.status).slice(-1),
      ["interrupted"],
      `no status after the announced end: ${JSON.stringify(mine.map((e) => [e.event, e.status]))}`,
    );
    assert.equal(mine.filter((e) => e.event === "finished").length, 1, "one finished webhook");
    assert.equal(mine.filter((e) => e.event === "status_changed" && e.status === "interrupted").length, 1);
    const instance = await b.request("GET", `${INTERNAL_PREFIX}/instance`, { headers: { [SECRET_HEADER]: CLUSTER_SECRET } });
    assert.equal(instance.body.active_sessions, 0, `the cut-off instance's bot has left: ${instance.text}`);
    assert.equal((await waitFor(a, onA, () => true)).status, "recording", "the connected instance's session runs on");
  });

  test("the database itself gone past DEAD_AFTER: no instance takes another's sessions", async (t) => {
    const db = await clusterDatabase(t);
    const receiver = await startReceiver();
    db.cleanup(() => receiver.close());
    const a = await nodeBehindProxy(db, "outage-a", receiver.url);
    const b = await nodeBehindProxy(db, "outage-b", receiver.url);
    const sessions = await oneEach(a.node);
    a.proxy.cut();
    b.proxy.cut();
    await sleep(CUT_MS);
    // Back one after the other, b a sweep period later: a must not judge b by a heartbeat the
    // outage stopped before a itself has been connected for DEAD_AFTER_MS.
    a.proxy.restore();
    await sleep(TAKEOVER_SWEEP_MS + 1_000);
    b.proxy.restore();
    // Past the point where a sweep that trusted the stale heartbeats would have ended them.
    await sleep(DEAD_AFTER_MS + 10_000);
    for (const id of sessions.values()) {
      const s = await waitFor(a.node, id, () => true);
      assert.equal(s.status, "recording", JSON.stringify(s));
    }
    assert.deepEqual(receiver.events.filter((e) => e.status === "interrupted"), []);
  });
});
