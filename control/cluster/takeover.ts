/**
 * Takeover (issue #19 "Liveness and takeover"): every instance sweeps every TAKEOVER_SWEEP_MS for
 * running sessions of instances whose heartbeat is older than DEAD_AFTER_MS and marks them
 * `interrupted` with `end_reason` `instance_lost`, ended when their instance was last heard of
 * (its last heartbeat), not when the sweep noticed. The update is conditional (still running, the
 * owner still dead), so of several sweeping instances exactly one wins each session and sends its
 * `status_changed`. The `finished` webhook stays with the owner: it alone holds the journal and
 * the recording, and sends it once it is back and has stored the file (control/bot/recovery.ts).
 *
 * A sweeper judges others only once its own heartbeats have reached the database for DEAD_AFTER_MS
 * in a row (`mayJudge`): after an outage of the database itself every instance looks dead until
 * it has written a heartbeat again, and nobody's meetings are lost to that.
 *
 * The sweep also re-sends the placement job of a session still waiting for a slot after a while
 * (the instance that wrote it may have died between the row and the job); the job id is the
 * session id, so a job that exists is not doubled.
 */
import type { Pool } from "pg";
import { TAKEOVER_SWEEP_MS } from "../../shared/cluster/protocol.ts";
import type { SessionStatus } from "../../shared/journal/records.ts";
import type { Logger } from "../../shared/log/logger.ts";
import type { Notifier } from "../bot/notifier.ts";
import { RUNNING_STATUSES } from "../bot/session-repo.ts";
import { NOW_UTC, alive } from "./instances.ts";

const RUNNING_SQL = RUNNING_STATUSES.map((s) => `'${s}'`).join(", ");
/** A join not placed after this long gets its job sent again. */
const REQUEUE_AFTER_SECONDS = 10;

interface Lost {
  id: string;
  reference: string | null;
  previous: SessionStatus;
  instanceId: string;
  endedAt: Date;
}

export interface TakeoverOptions {
  pool: Pool;
  instanceId: string;
  notifier: Notifier;
  logger: Logger;
  requeue: (sessionId: string) => Promise<void>;
  /** This instance has been connected long enough to tell a dead instance from a shared outage. */
  mayJudge: () => boolean;
}

export function startTakeover(o: TakeoverOptions): { sweep(): Promise<Lost[]>; stop(): void } {
  const log = o.logger.child({ component: "takeover" });
  let running: Promise<Lost[]> | null = null;
  const sweep = async (): Promise<Lost[]> => {
    const rows = o.mayJudge() ? await markLost() : [];
    const waiting = await o.pool.query<{ id: string }>(
      `SELECT b.id FROM "BotSession" b WHERE b.status = 'joining' AND b."instanceId" IS NULL AND b."createdAt" < ${NOW_UTC} - interval '${REQUEUE_AFTER_SECONDS} seconds'`,
    );
    for (const { id } of waiting.rows) await o.requeue(id);
    return rows;
  };
  const markLost = async (): Promise<Lost[]> => {
    const { rows } = await o.pool.query<Lost>(
      `UPDATE "BotSession" b SET status = 'interrupted', "endReason" = 'instance_lost', "endedAt" = GREATEST(old."lastSeen", b."createdAt", b."joinedAt"), "updatedAt" = ${NOW_UTC}, "activeReference" = NULL
       FROM (SELECT s.id, s.status, i."heartbeatAt" AS "lastSeen" FROM "BotSession" s JOIN "ClusterInstance" i ON i.id = s."instanceId"
             WHERE s.status IN (${RUNNING_SQL}) AND s."instanceId" <> $1 AND NOT ${alive("i")}
             FOR UPDATE OF s SKIP LOCKED) old
       WHERE b.id = old.id AND b.status IN (${RUNNING_SQL})
       RETURNING b.id, b.reference, old.status AS previous, b."instanceId" AS "instanceId", (b."endedAt" AT TIME ZONE 'UTC') AS "endedAt"`,
      [o.instanceId],
    );
    for (const lost of rows) {
      log.warn({ session_id: lost.id, lost_instance: lost.instanceId }, "instance lost: session marked interrupted");
      await o.notifier.statusChanged({
        sessionId: lost.id,
        reference: lost.reference,
        status: "interrupted",
        previous: lost.previous,
        at: lost.endedAt,
        endReason: "instance_lost",
        recordingFile: null,
        errorMessage: null,
        instanceId: lost.instanceId,
      });
    }
    return rows;
  };
  const timer = setInterval(() => {
    if (running) return;
    running = sweep()
      .catch((err: unknown) => (log.warn({ err }, "takeover sweep failed"), []))
      .finally(() => (running = null));
  }, TAKEOVER_SWEEP_MS);
  timer.unref();
  return { sweep, stop: () => clearInterval(timer) };
}
