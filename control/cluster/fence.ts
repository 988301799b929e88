/**
 * Fencing (issue #19): an instance cut off from the database for DEAD_AFTER_MS looks dead to the
 * others, which mark its running sessions `interrupted` (`instance_lost`) while its bots, which
 * never heard of it, go on recording. Once its heartbeat reaches the database again the instance
 * looks for such sessions among those it still runs and ends them: each bot leaves the meeting,
 * its recording is stored and the end the cluster announced stands (finalize.ts keeps
 * `interrupted` / `instance_lost`: one `finished` webhook, no second status).
 */
import type { Pool } from "pg";
import type { Logger } from "../../shared/log/logger.ts";
import type { Supervisor } from "../bot/supervisor/supervisor.ts";

export type Fence = (supervisor: Supervisor | null) => Promise<void>;

export function createFence(o: { pool: Pool; logger: Logger }): Fence {
  const fenced = new Set<string>();
  return async (supervisor) => {
    const ids = supervisor?.sessionIds().filter((id) => !fenced.has(id)) ?? [];
    if (!supervisor || ids.length === 0) return;
    const { rows } = await o.pool.query<{ id: string }>(`SELECT id FROM "BotSession" WHERE id = ANY($1::text[]) AND "endReason" = 'instance_lost'`, [ids]);
    for (const { id } of rows) {
      fenced.add(id);
      o.logger.warn({ session_id: id }, "this instance was cut off from the database and another marked its session interrupted (instance_lost): the bot leaves");
      void supervisor.stop(id, 0);
    }
  };
}
