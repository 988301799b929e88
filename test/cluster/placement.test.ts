/**
 * Three in-process instances on one fresh PostgreSQL database, MAX_CONCURRENT_SESSIONS 1 each,
 * fake worker (issue #19): joins sent to one instance run on all three and the fourth is 503;
 * one reference joined on three instances at once is one bot; `/`, `/status` and `/sessions`
 * answer for the cluster on every instance; `/stop` and `/audio` reach the owner through any
 * instance; internal routes refuse a caller without the secret; a restart of a healthy instance
 * leaves the others' sessions alone.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { providers } from "../harness/databases.ts";
import { MEETING_URL } from "../bot/fixtures/bot-app.ts";
import { CLUSTER_SECRET, clusterDatabase, startInProcessNode, waitFor, type InProcessNode } from "./fixtures/cluster.ts";
import { SECRET_HEADER } from "../../shared/cluster/protocol.ts";
import { connect } from "node:net";
import { randomUUID } from "node:crypto";
import pg from "pg";
import type { Feature } from "../../control/app/feature.ts";

/** Stands in for the listen WebSocket: answers 101 on /audio/{id}/listen/…, names its instance, echoes. */
const echoUpgrade = (instance: string): Feature => ({
  name: "echo-upgrade",
  mount: () => ({
    upgrade(req, socket) {
      if (!/^\/audio\/[^/]+\/listen\//.test(req.url ?? "")) return false;
      socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\nX-Instance: ${instance}\r\n\r\n`);
      socket.on("data", (d: Buffer) => socket.write(d));
      return true;
    },
  }),
});

/** Sends an upgrade request and one message; resolves with everything read within a moment of the echo. */
function upgradeRoundTrip(url: string, path: string, headers: Record<string, string> = {}): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let got = "";
    const timer = setTimeout(() => (socket.destroy(), resolve(got)), 5000);
    socket.on("error", reject);
    socket.on("data", (d: Buffer) => {
      got += d.toString("latin1");
      if (got.includes("\r\n\r\n") && !got.includes("ping") && got.startsWith("HTTP/1.1 101")) socket.write("ping");
      if (got.endsWith("ping") || !got.startsWith("HTTP/1.1 101")) {
        if (got.includes("\r\n\r\n")) {
          clearTimeout(timer);
          socket.destroy();
          resolve(got);
        }
      }
    });
    socket.on("close", () => (clearTimeout(timer), resolve(got)));
    const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("");
    socket.write(`GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\nUpgrade: echo\r\nConnection: Upgrade\r\n${extra}\r\n`);
  });
}

type Json = Record<string, unknown>;
const sessionOf = (body: Json): Json => body.session as Json;

describe("cluster placement and routing (three instances, fake worker)", { skip: !providers().includes("postgresql") && "PostgreSQL only", concurrency: false, timeout: 120_000 }, () => {
  test("placement, 503 when full, one bot per reference, cluster-wide reads, forwarding, internal routes", async (t) => {
    const db = await clusterDatabase(t);
    const bot = { MIC_PLAYBACK_ENABLED: true };
    const nodes: InProcessNode[] = [];
    for (const id of ["node-a", "node-b", "node-c"]) nodes.push(await startInProcessNode({ db, id, bot, features: [echoUpgrade(id)] }));
    const [a, b, c] = nodes as [InProcessNode, InProcessNode, InProcessNode];

    // One reference on three instances at once: one session, one bot.
    const same = await Promise.all(nodes.map((n) => n.request("POST", "/join", { body: { meeting_url: MEETING_URL, reference: "shared-ref" } })));
    for (const r of same) assert.equal(r.status, 200, r.text);
    const ids = new Set(same.map((r) => sessionOf(r.body).session_id));
    assert.equal(ids.size, 1, "one session for one reference");
    // Two more joins, both sent to instance a.
    const more = [];
    for (const ref of ["r2", "r3"]) {
      const r = await a.request("POST", "/join", { body: { meeting_url: MEETING_URL, reference: ref } });
      assert.equal(r.status, 200, r.text);
      more.push(String(sessionOf(r.body).session_id));
    }
    const all = [String([...ids][0]), ...more];
    const placed = await Promise.all(all.map((id) => waitFor(b, id, (s) => s.status === "recording" && typeof s.instance_id === "string")));
    assert.deepEqual(new Set(placed.map((s) => s.instance_id)), new Set(["node-a", "node-b", "node-c"]), "one session on each instance");

    const full = await c.request("POST", "/join", { body: { meeting_url: MEETING_URL, reference: "r4" } });
    assert.equal(full.status, 503, full.text);
    assert.ok(Number(full.headers.get("retry-after")) > 0);
    assert.equal(typeof full.body.detail, "string");
    // The reference of a running session still answers with it, full or not.
    const again = await c.request("POST", "/join", { body: { meeting_url: MEETING_URL, reference: "r2" } });
    assert.equal(again.status, 200);
    assert.equal(sessionOf(again.body).session_id, more[0]);

    for (const n of nodes) {
      assert.equal((await n.request("GET", "/")).body.active_sessions, 3, `GET / on ${n.id} counts the cluster`);
      const list = (await n.request("GET", "/sessions")).body.sessions as Json[];
      assert.equal(list.length, 3);
      assert.ok(list.every((s) => typeof s.instance_id === "string"));
    }

    // Owner-bound routes through an instance that is not the owner.
    const [first] = placed;
    const owner = nodes.find((n) => n.id === first!.instance_id)!;
    const other = nodes.find((n) => n !== owner)!;
    const audio = await other.request("POST", `/audio/${String(first!.session_id)}/stop`);
    assert.equal(audio.status, 200, audio.text);
    assert.equal(audio.body.status, "stopped");
    // An upgrade (the listen WebSocket) through another instance reaches the owner's handler.
    const upgraded = await upgradeRoundTrip(other.url, `/audio/${String(first!.session_id)}/listen/some-token`);
    assert.match(upgraded, /^HTTP\/1\.1 101/);
    assert.match(upgraded, new RegExp(`X-Instance: ${owner.id}\r\n`));
    assert.ok(upgraded.endsWith("ping"), "bytes flow both ways");
    const refused = await upgradeRoundTrip(other.url, `/_cluster/forward/audio/${String(first!.session_id)}/listen/some-token`);
    assert.match(refused, /^HTTP\/1\.1 403/);
    const own = await upgradeRoundTrip(owner.url, `/audio/${String(first!.session_id)}/listen/some-token`, { [SECRET_HEADER]: "forged" });
    assert.match(own, new RegExp(`X-Instance: ${owner.id}\r\n`), "the owner answers its own session");
    const stop = await other.request("POST", `/stop/${String(first!.session_id)}`);
    assert.equal(stop.status, 200, stop.text);
    const stopped = await waitFor(other, String(first!.session_id), (s) => s.status === "stopped");
    assert.equal(stopped.end_reason, "stopped_by_api");
    assert.equal(stopped.instance_id, owner.id);
    assert.ok(owner.logs.lines.some((l) => l.includes(`/stop/${String(first!.session_id)}`)), "the owner served the stop");

    // A freed slot takes the next join.
    const next = await c.request("POST", "/join", { body: { meeting_url: MEETING_URL, reference: "r5" } });
    assert.equal(next.status, 200, next.text);
    const nextRunning = await waitFor(a, String(sessionOf(next.body).session_id), (s) => s.status === "recording");
    assert.equal(nextRunning.instance_id, owner.id, "placed where the slot was free");

    // Internal routes: the secret or nothing; none of them in the public document.
    assert.equal((await a.request("GET", "/_cluster/instance")).status, 403);
    assert.equal((await a.request("GET", "/_cluster/instance", { headers: { [SECRET_HEADER]: "wrong-secret-wrong-secret" } })).status, 403);
    assert.equal((await a.request("POST", `/_cluster/forward/stop/${more[1]}`)).status, 403);
    const described = await a.request("GET", "/_cluster/instance", { headers: { [SECRET_HEADER]: CLUSTER_SECRET } });
    assert.equal(described.status, 200);
    assert.equal(described.body.instance_id, "node-a");
    const doc = (await a.request("GET", "/openapi.json")).body as { paths: Record<string, unknown> };
    assert.ok(!Object.keys(doc.paths).some((p) => p.startsWith("/_cluster")));
    assert.ok(doc.paths["/sessions"]);
    for (const n of nodes) assert.deepEqual(n.logs.leaks([CLUSTER_SECRET]), [], `no secret in ${n.id}'s log`);
  });

  test("a restart of a healthy instance touches no other instance's sessions", async (t) => {
    const db = await clusterDatabase(t);
    const a = await startInProcessNode({ db, id: "node-a" });
    const b = await startInProcessNode({ db, id: "node-b" });
    const ids: string[] = [];
    for (const ref of ["x1", "x2"]) ids.push(String(sessionOf((await a.request("POST", "/join", { body: { meeting_url: MEETING_URL, reference: ref } })).body).session_id));
    const running = await Promise.all(ids.map((id) => waitFor(a, id, (s) => s.status === "recording")));
    const onA = String(running.find((s) => s.instance_id === "node-a")!.session_id);
    const onB = String(running.find((s) => s.instance_id === "node-b")!.session_id);
    await a.stop();
    const again = await startInProcessNode({ db, id: "node-a", recordingsDir: a.recordingsDir });
    assert.equal((await waitFor(again, onA, (s) => s.status === "stopped")).instance_id, "node-a");
    const other = await waitFor(again, onB, () => true);
    assert.equal(other.status, "recording", "node-b's session is untouched by node-a's restart");
    assert.equal(other.ended_at, null);
    assert.equal((await b.request("GET", "/")).body.active_sessions, 1);
  });

  test("a join no instance has taken: stopped where it is, or placed by the sweep when its job was lost", async (t) => {
    const db = await clusterDatabase(t);
    const a = await startInProcessNode({ db, id: "node-a" });
    // Rows written as by an instance that died between the session and its job.
    const pool = new pg.Pool({ connectionString: db.url });
    db.cleanup(() => pool.end());
    const insert = (id: string, ageSeconds: number) =>
      pool.query(
        `INSERT INTO "BotSession" (id, "meetingUrl", reference, "activeReference", "displayName", status, record, "recordingFormat", "createdAt", "updatedAt")
         VALUES ($1, $2, $3, $3, 'Lost', 'joining', true, 'wav', (now() AT TIME ZONE 'UTC') - make_interval(secs => $4), now() AT TIME ZONE 'UTC')`,
        [id, MEETING_URL, `lost-${id.slice(0, 8)}`, ageSeconds],
      );
    const fresh = randomUUID();
    await insert(fresh, 0);
    const stop = await a.request("POST", `/stop/${fresh}`);
    assert.equal(stop.status, 200, stop.text);
    assert.equal(stop.body.status, "stopped");
    assert.equal(stop.body.end_reason, "stopped_by_api");
    const old = randomUUID();
    await insert(old, 30);
    const placed = await waitFor(a, old, (s) => s.status === "recording", 60_000);
    assert.equal(placed.instance_id, "node-a");
    assert.equal((await waitFor(a, fresh, () => true)).status, "stopped", "a stopped join is never placed");
  });
});
