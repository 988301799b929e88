/**
 * One instance's part in the cluster (issue #19), started by the bot feature when
 * clusterSettings() says cluster mode is on: its ClusterInstance row and heartbeat (with its disk
 * verdict), placement (pg-boss), takeover of dead instances' sessions, the internal routes and
 * owner forwarding, and the drain of a SIGTERM. With SQLite none of this exists.
 */
import type { Express } from "express";
import type { Pool } from "pg";
import { DEAD_AFTER_MS, HEARTBEAT_INTERVAL_MS } from "../../shared/cluster/protocol.ts";
import type { Logger } from "../../shared/log/logger.ts";
import type { Database } from "../db/client.ts";
import type { Notifier } from "../bot/notifier.ts";
import type { CreateOutcome, NewSession, SessionRepo } from "../bot/session-repo.ts";
import { RUNNING_STATUSES } from "../bot/session-repo.ts";
import type { Supervisor } from "../bot/supervisor/supervisor.ts";
import { ownerForwarding } from "./forward.ts";
import { ownerUpgrade, type UpgradeHandler } from "./forward-upgrade.ts";
import { createDiskRoom } from "./disk-room.ts";
import { createFence } from "./fence.ts";
import { refuseTakenId } from "./id-guard.ts";
import { Instances } from "./instances.ts";
import { internalRoutes } from "./internal.ts";
import { Placement } from "./placement.ts";
import type { ClusterSettings } from "./settings.ts";
import { startTakeover } from "./takeover.ts";
import { NOW_UTC } from "./instances.ts";

const DRAIN_CHECK_MS = 500;

export interface Cluster {
  settings: ClusterSettings;
  /** `POST /join` in cluster mode: the session and its placement job, or 503 when every instance is full. */
  admit(input: NewSession): Promise<CreateOutcome>;
  /** Running sessions of the whole cluster (`GET /`). */
  activeSessions(): Promise<number>;
  /** Internal routes and owner forwarding, mounted before the bot routes. */
  mount(app: Express): void;
  /** Upgrades (the listen WebSocket) for sessions of other instances; see forward-upgrade.ts. */
  upgrade: UpgradeHandler;
  startConsumer(supervisor: Supervisor): void;
  ready(): Record<string, string>;
  /** SIGTERM: take no new sessions, answer /readyz 503, wait for the running ones (at most drainMs). */
  drain(supervisor: Supervisor): Promise<void>;
  close(): Promise<void>;
}

export async function startCluster(o: { settings: ClusterSettings; database: Database; repo: SessionRepo; notifier: Notifier; logger: Logger }): Promise<Cluster> {
  const { settings, database, repo } = o;
  if (database.driver.kind !== "postgresql") throw new Error("cluster mode needs PostgreSQL");
  const pool: Pool = database.driver.pool;
  // Takeover and forwarding bind their own `component` on `base`: JSON log lines keep each key once.
  const base = o.logger.child({ instance: settings.instanceId });
  const log = base.child({ component: "cluster" });
  const instances = new Instances(pool, settings.instanceId);
  await refuseTakenId({ pool, instanceId: settings.instanceId, logger: log });
  let local: Supervisor | null = null;
  const disk = createDiskRoom(settings.disk, log);
  await instances.register(settings.instanceUrl, settings.maxSessions, await disk.check([]));
  const fence = createFence({ pool, logger: log });
  const heartbeat = setInterval(
    () =>
      void disk
        .check(local?.recordings() ?? [])
        .then((room) => instances.heartbeat(room))
        .then(() => fence(local))
        .catch((err: unknown) => log.warn({ err }, "heartbeat failed")),
    HEARTBEAT_INTERVAL_MS,
  );
  heartbeat.unref();
  const placement = new Placement({ url: databaseUrl(pool), pool, db: database.db, repo, instanceId: settings.instanceId, maxSessions: settings.maxSessions, disk, logger: log });
  try {
    await placement.start();
  } catch (error) {
    clearInterval(heartbeat);
    throw error;
  }
  const takeover = startTakeover({
    pool,
    instanceId: settings.instanceId,
    notifier: o.notifier,
    logger: base,
    requeue: (id) => placement.enqueue(id),
    mayJudge: () => instances.healthyFor(DEAD_AFTER_MS),
  });
  let state: "active" | "draining" | "stopped" = "active";
  log.info({ url: settings.instanceUrl, max_sessions: settings.maxSessions }, "cluster instance registered");

  return {
    settings,
    admit: (input) => placement.admit(input),
    async activeSessions() {
      return database.db.botSession.count({ where: { status: { in: [...RUNNING_STATUSES] } } });
    },
    mount(app) {
      app.use(
        internalRoutes({
          secret: settings.secret,
          describe: () => ({ instance_id: settings.instanceId, state, active_sessions: local?.activeCount() ?? 0, max_sessions: settings.maxSessions }),
        }),
      );
      app.use(ownerForwarding({ pool, instanceId: settings.instanceId, secret: settings.secret, logger: base, stopUnplaced: (id) => stopUnplaced(pool, id, o.notifier) }));
    },
    upgrade: ownerUpgrade({ pool, instanceId: settings.instanceId, secret: settings.secret, logger: base }),
    startConsumer(supervisor) {
      local = supervisor;
      placement.startConsumer(supervisor);
    },
    ready: (): Record<string, string> => (state === "active" ? {} : { cluster: `instance ${state}: it takes no new sessions` }),
    async drain(supervisor) {
      if (state !== "active") return;
      state = "draining";
      await placement.stopConsumer();
      await instances.setState("draining").catch((err: unknown) => log.warn({ err }, "could not record the drain"));
      const deadline = Date.now() + settings.drainMs;
      log.info({ sessions: supervisor.activeCount(), drain_ms: settings.drainMs }, "draining: running sessions go on; new ones go to other instances");
      while (supervisor.activeCount() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, DRAIN_CHECK_MS));
      if (supervisor.activeCount() > 0) log.warn({ sessions: supervisor.activeCount() }, "drain timeout: the remaining sessions are stopped");
    },
    async close() {
      state = "stopped";
      takeover.stop();
      await placement.close();
      clearInterval(heartbeat);
      await instances.setState("stopped").catch((err: unknown) => log.warn({ err }, "could not record the stop"));
    },
  };
}

/** pg-boss opens its own small pool on the same database. */
function databaseUrl(pool: Pool): string {
  const url = (pool as unknown as { options: { connectionString?: string } }).options.connectionString;
  if (!url) throw new Error("the PostgreSQL pool has no connection string");
  return url;
}

/**
 * A session still waiting for a slot is stopped in the database (its job then finds nothing to
 * claim): `stopped` / `stopped_by_api` with both webhooks, as a bot that never joined would end.
 */
async function stopUnplaced(pool: Pool, id: string, notifier: Notifier): Promise<void> {
  const { rows } = await pool.query<{ reference: string | null; endedAt: Date }>(
    `UPDATE "BotSession" SET status = 'stopped', "endReason" = 'stopped_by_api', "endedAt" = ${NOW_UTC}, "updatedAt" = ${NOW_UTC}, "activeReference" = NULL
     WHERE id = $1 AND "instanceId" IS NULL AND status = 'joining' RETURNING reference, ("endedAt" AT TIME ZONE 'UTC') AS "endedAt"`,
    [id],
  );
  const row = rows[0];
  if (!row) return;
  const common = { sessionId: id, reference: row.reference, status: "stopped" as const, previous: "joining" as const, endReason: "stopped_by_api" as const, recordingFile: null, errorMessage: null, at: row.endedAt };
  await notifier.statusChanged(common);
  await notifier.finished(common);
}
