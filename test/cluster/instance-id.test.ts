/**
 * One process per INSTANCE_ID (issue #19): a second process started with the id of a live
 * instance is refused (exit 78, the key named) and leaves that instance's row and sessions alone;
 * an instance restarted right after a crash (its row's heartbeat fresh but still) starts.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import pg from "pg";
import { providers } from "../harness/databases.ts";
import { captureLogs } from "../harness/logs.ts";
import { migratePostgres } from "../../control/db/migrate-postgres.ts";
import { MEETING_URL } from "../bot/fixtures/bot-app.ts";
import { TEST_SIGNING_KEY } from "../harness/app.ts";
import { CLUSTER_SECRET, clusterDatabase, freePort, startInProcessNode, waitFor } from "./fixtures/cluster.ts";

type Json = Record<string, unknown>;
const MAIN = new URL("../../control/main.ts", import.meta.url).pathname;

/** `control/main.ts` as a cluster instance that is expected to refuse to start: its exit code and output. */
async function refusedStart(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const port = await freePort();
  const proc = spawn(process.execPath, ["--import", "tsx", MAIN], {
    env: { ...process.env, HOST: "127.0.0.1", PORT: String(port), INSTANCE_URL: `http://127.0.0.1:${port}`, CLUSTER_SECRET, LocalLogin__SigningKey: TEST_SIGNING_KEY, LocalLogin__Enabled: "false", WARM_WORKERS: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  proc.stdout.on("data", (d: Buffer) => (output += d.toString()));
  proc.stderr.on("data", (d: Buffer) => (output += d.toString()));
  const timer = setTimeout(() => proc.kill("SIGKILL"), 60_000);
  const code = await new Promise<number | null>((resolve) => proc.once("exit", resolve));
  clearTimeout(timer);
  return { code, output };
}

describe("instance ids (issue #19)", { skip: !providers().includes("postgresql") && "PostgreSQL only", concurrency: false, timeout: 180_000 }, () => {
  test("a second process with a live instance's id is refused and changes nothing", async (t) => {
    const db = await clusterDatabase(t);
    const pool = new pg.Pool({ connectionString: db.url });
    db.cleanup(() => pool.end());
    const a = await startInProcessNode({ db, id: "same-id" });
    const join1 = await a.request("POST", "/join", { body: { meeting_url: MEETING_URL, reference: "live" } });
    assert.equal(join1.status, 200, join1.text);
    const id = String((join1.body.session as Json).session_id);
    await waitFor(a, id, (s) => s.status === "recording");

    const dir = mkdtempSync(join(tmpdir(), "cluster-dup-"));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const second = await refusedStart({ DATABASE_URL: db.url, INSTANCE_ID: "same-id", RECORDINGS_DIR: dir });
    assert.equal(second.code, 78, second.output);
    assert.match(second.output, /configuration error: INSTANCE_ID: another running instance already uses "same-id"/);
    const { rows } = await pool.query<{ url: string }>(`SELECT url FROM "ClusterInstance" WHERE id = 'same-id'`);
    assert.equal(rows[0]?.url, a.url, "the live instance's URL stands");
    const after = await waitFor(a, id, () => true);
    assert.equal(after.status, "recording", "the live instance's session runs on");
    assert.equal(after.ended_at, null);
  });

  test("a restart right after a crash (fresh heartbeat that does not move) starts", async (t) => {
    const db = await clusterDatabase(t);
    const pool = new pg.Pool({ connectionString: db.url });
    db.cleanup(() => pool.end());
    await migratePostgres(db.url, captureLogs().logger);
    // The row a run killed a moment ago leaves: active, heartbeat just now.
    await pool.query(
      `INSERT INTO "ClusterInstance" (id, url, state, "maxSessions", "startedAt", "heartbeatAt")
       VALUES ('crashed', 'http://127.0.0.1:1', 'active', 1, now() AT TIME ZONE 'UTC', now() AT TIME ZONE 'UTC')`,
    );
    const node = await startInProcessNode({ db, id: "crashed" });
    assert.ok(node.logs.lines.some((l) => l.includes("checking that no other process holds it")), "the heartbeat was watched");
    const { rows } = await pool.query<{ url: string; state: string }>(`SELECT url, state FROM "ClusterInstance" WHERE id = 'crashed'`);
    assert.deepEqual(rows[0], { url: node.url, state: "active" });
  });
});
