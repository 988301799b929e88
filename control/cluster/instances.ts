/**
 * The ClusterInstance table on the shared PostgreSQL pool: this instance's row and heartbeat, and
 * what others know of it. Every time comes from the database's clock (UTC `timestamp`, as Prisma
 * stores it), so instances with skewed clocks still agree on who is alive.
 */
import type { Pool } from "pg";
import { DEAD_AFTER_MS } from "../../shared/cluster/protocol.ts";

export type InstanceState = "active" | "draining" | "stopped";

export const NOW_UTC = `(now() AT TIME ZONE 'UTC')`;
/** SQL condition: the instance row `alias` heartbeat is recent. */
export const alive = (alias: string): string => `${alias}."heartbeatAt" > ${NOW_UTC} - interval '${DEAD_AFTER_MS / 1000} seconds'`;

export interface InstanceRow {
  id: string;
  url: string;
  state: InstanceState;
  alive: boolean;
}

export class Instances {
  /** Since when this instance's heartbeats have all reached the database (monotonic ms), null after a failure. */
  #healthySince: number | null = null;

  constructor(
    private readonly pool: Pool,
    readonly id: string,
  ) {}

  /**
   * This instance has reached the database with every heartbeat for at least `ms`. Only then may
   * it judge another instance's silence: after an outage of the database itself every instance
   * was silent, and each needs a heartbeat or two to show it is alive again.
   */
  healthyFor(ms: number): boolean {
    return this.#healthySince !== null && performance.now() - this.#healthySince >= ms;
  }

  /** Registers (or re-registers after a restart) this instance as active with a fresh heartbeat. */
  async register(url: string, maxSessions: number, diskRoom: boolean): Promise<void> {
    await this.pool.query(
      `INSERT INTO "ClusterInstance" (id, url, state, "maxSessions", "diskRoom", "startedAt", "heartbeatAt") VALUES ($1, $2, 'active', $3, $4, ${NOW_UTC}, ${NOW_UTC})
       ON CONFLICT (id) DO UPDATE SET url = EXCLUDED.url, state = 'active', "maxSessions" = EXCLUDED."maxSessions", "diskRoom" = EXCLUDED."diskRoom", "startedAt" = ${NOW_UTC}, "heartbeatAt" = ${NOW_UTC}`,
      [this.id, url, maxSessions, diskRoom],
    );
  }

  /** The heartbeat, with this instance's disk verdict (disk-room.ts) for admission. */
  async heartbeat(diskRoom: boolean): Promise<void> {
    try {
      await this.pool.query(`UPDATE "ClusterInstance" SET "heartbeatAt" = ${NOW_UTC}, "diskRoom" = $2 WHERE id = $1`, [this.id, diskRoom]);
    } catch (err) {
      this.#healthySince = null;
      throw err;
    }
    this.#healthySince ??= performance.now();
  }

  async setState(state: InstanceState): Promise<void> {
    await this.pool.query(`UPDATE "ClusterInstance" SET state = $2, "heartbeatAt" = ${NOW_UTC} WHERE id = $1`, [this.id, state]);
  }

  async find(id: string): Promise<InstanceRow | null> {
    const { rows } = await this.pool.query<InstanceRow>(`SELECT i.id, i.url, i.state, ${alive("i")} AS alive FROM "ClusterInstance" i WHERE i.id = $1`, [id]);
    return rows[0] ?? null;
  }

  async list(): Promise<InstanceRow[]> {
    const { rows } = await this.pool.query<InstanceRow>(`SELECT i.id, i.url, i.state, ${alive("i")} AS alive FROM "ClusterInstance" i ORDER BY i.id`);
    return rows;
  }
}
