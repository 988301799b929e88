/**
 * One process per INSTANCE_ID (issue #19). Two processes given the same id (the default is the
 * host name: two units on one host, a copied environment) would share one row: the second would
 * mark the first's running sessions interrupted at recovery and overwrite its URL. So before this
 * instance registers, a row of its id that still looks alive is watched for a little over one
 * heartbeat interval: a heartbeat that moves belongs to another live process, and the start is
 * refused (exit 78); one that does not move was this instance's own previous run (a crash and a
 * quick restart), and the start goes on.
 */
import type { Pool } from "pg";
import { HEARTBEAT_INTERVAL_MS } from "../../shared/cluster/protocol.ts";
import type { Logger } from "../../shared/log/logger.ts";
import { ConfigError } from "../config/error.ts";
import { alive } from "./instances.ts";

/** Long enough for a live holder's next heartbeat to land, with room for its query. */
export const ID_WATCH_MS = HEARTBEAT_INTERVAL_MS + 1_000;

interface Holder {
  url: string;
  state: string;
  alive: boolean;
  /** The heartbeat as text: compared exactly, whatever the clock's precision. */
  beat: string;
}

async function holder(pool: Pool, id: string): Promise<Holder | null> {
  const { rows } = await pool.query<Holder>(`SELECT i.url, i.state, ${alive("i")} AS alive, i."heartbeatAt"::text AS beat FROM "ClusterInstance" i WHERE i.id = $1`, [id]);
  return rows[0] ?? null;
}

export async function refuseTakenId(o: { pool: Pool; instanceId: string; logger: Logger; watchMs?: number }): Promise<void> {
  const before = await holder(o.pool, o.instanceId);
  // No row, a stopped one (its process closed) or a dead heartbeat: nobody holds the id.
  if (!before || before.state === "stopped" || !before.alive) return;
  const watchMs = o.watchMs ?? ID_WATCH_MS;
  o.logger.info({ watch_ms: watchMs }, "this instance id has a recent heartbeat: checking that no other process holds it");
  await new Promise((r) => setTimeout(r, watchMs));
  const after = await holder(o.pool, o.instanceId);
  if (after && after.beat !== before.beat) {
    throw new ConfigError(
      "INSTANCE_ID",
      `another running instance already uses "${o.instanceId}" (its heartbeat goes on; it is reached at ${after.url}): give every instance its own INSTANCE_ID`,
    );
  }
}
