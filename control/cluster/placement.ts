/**
 * Placement (issue #19): `POST /join` on any instance writes the session and a pg-boss job; an
 * instance with a free slot takes the job. pg-boss's LISTEN/NOTIFY wakes the consumers the moment
 * the job commits, so placement does not wait for a polling interval.
 *
 * - Admission: joins are serialised cluster-wide by an advisory lock; under it the free slots of
 *   live, active instances minus the sessions still waiting for a slot decide between a new
 *   session and 503, and the free slots of those with room on disk (disk-room.ts) between a new
 *   session and 507. So the cluster never queues more than it can run.
 * - An instance without room in RECORDINGS_DIR takes no jobs, as one without a free slot.
 * - Never more than MAX_CONCURRENT_SESSIONS per instance, whatever the races: an instance only
 *   consumes while it has a free slot, takes each job through the supervisor's synchronous slot
 *   reservation, and claims the row with a conditional update (`instanceId IS NULL`), so a job
 *   delivered twice (an expired claim) starts one bot.
 * - The job's id is the session id: sending it again (the sweeper does, for a join whose instance
 *   died between the row and the job) never makes a second job.
 */
import { PgBoss } from "pg-boss";
import type { Pool } from "pg";
import type { BotSession } from "../../prisma/generated/sqlite/client.ts";
import type { Db } from "../db/client.ts";
import type { CreateOutcome, NewSession, SessionRepo } from "../bot/session-repo.ts";
import { RUNNING_STATUSES } from "../bot/session-repo.ts";
import type { Supervisor } from "../bot/supervisor/supervisor.ts";
import { AppError } from "../http/errors.ts";
import { metrics } from "../metrics/index.ts";
import type { Logger } from "../../shared/log/logger.ts";
import type { DiskRoom } from "./disk-room.ts";
import { alive } from "./instances.ts";

export const PLACEMENT_QUEUE = "toamaisutaa-session-placement";
/** pg_advisory_lock key of the admission step ("toa-join" in ASCII). */
const ADMISSION_LOCK = 0x746f612d6a6f696en;
const RETRY_AFTER_SECONDS = 30;
/** A slot frees when a session ends; the consumer also re-checks this often as a backstop. */
const CONSUMER_CHECK_MS = 1_000;

const RUNNING_SQL = RUNNING_STATUSES.map((s) => `'${s}'`).join(", ");

export interface PlacementJob {
  sessionId: string;
}

export interface PlacementOptions {
  url: string;
  pool: Pool;
  db: Db;
  repo: SessionRepo;
  instanceId: string;
  maxSessions: number;
  disk: DiskRoom;
  logger: Logger;
}

export class Placement {
  private readonly boss: PgBoss;
  private workerId: string | null = null;
  private consuming = false;
  private supervisor: Supervisor | null = null;
  private toggling: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly o: PlacementOptions) {
    this.boss = new PgBoss({ connectionString: o.url, useListenNotify: true, schedule: false, max: 4 });
    this.boss.on("error", (err: unknown) => o.logger.warn({ err }, "placement queue error"));
  }

  async start(): Promise<void> {
    await this.boss.start();
    // Several instances start at once: creating the queue twice is harmless, a lost race is not an error.
    await this.boss
      // A job handed back (no free slot after the fetch) is retried every second for as long as a
      // join may wait; a job for a session that ended meanwhile finds nothing to claim and completes.
      .createQueue(PLACEMENT_QUEUE, { notify: true, expireInSeconds: 60, retryLimit: 24 * 3600, retryDelay: 1, retentionSeconds: 24 * 3600 })
      .catch(async (err: unknown) => {
        if (!(await this.boss.getQueue(PLACEMENT_QUEUE))) throw err;
      });
  }

  /**
   * Writes the session and its job, or returns the active session holding the reference; 503 when
   * the cluster is full, 507 when no instance with a free slot has room on disk for the session.
   */
  async admit(input: NewSession): Promise<CreateOutcome> {
    const client = await this.o.pool.connect();
    let locked = false;
    try {
      await client.query("SELECT pg_advisory_lock($1)", [ADMISSION_LOCK]);
      locked = true;
      if (input.reference !== null) {
        const existing = await this.o.repo.findActiveByReference(input.reference);
        if (existing) return { created: false, row: existing };
      }
      const { rows } = await client.query<{ free: number; roomy: number; waiting: number }>(
        `WITH live AS (SELECT i.id, i."maxSessions", i."diskRoom" FROM "ClusterInstance" i WHERE i.state = 'active' AND ${alive("i")}),
              load AS (SELECT b."instanceId" AS id, count(*)::int AS n FROM "BotSession" b
                       WHERE b.status IN (${RUNNING_SQL}) AND b."instanceId" IN (SELECT id FROM live) GROUP BY b."instanceId"),
              slots AS (SELECT live."diskRoom", GREATEST(live."maxSessions" - COALESCE(load.n, 0), 0) AS n FROM live LEFT JOIN load USING (id))
         SELECT COALESCE((SELECT sum(n) FROM slots), 0)::int AS free,
                COALESCE((SELECT sum(n) FROM slots WHERE "diskRoom"), 0)::int AS roomy,
                (SELECT count(*)::int FROM "BotSession" b WHERE b.status = 'joining' AND b."instanceId" IS NULL) AS waiting`,
      );
      // The sessions waiting for a slot go to instances with room on disk: only those take jobs.
      const { free = 0, roomy = 0, waiting = 0 } = rows[0] ?? {};
      if (free - waiting <= 0) {
        metrics.joinRefused();
        throw new AppError("service_unavailable", {
          message: "Every instance of the cluster is running MAX_CONCURRENT_SESSIONS sessions; try again later.",
          headers: { "Retry-After": String(RETRY_AFTER_SECONDS) },
        });
      }
      if (roomy - waiting <= 0) {
        throw new AppError("insufficient_storage", {
          message:
            "Not enough free disk space for another session: no instance of the cluster with a free slot can hold one more session's worst case " +
            "in RECORDINGS_DIR beside its running sessions and MIN_FREE_DISK_MB (its /readyz names the free space). Free space or lower MAX_RECORDING_MINUTES.",
        });
      }
      const outcome = await this.o.repo.create(input);
      if (outcome.created) await this.enqueue(outcome.row.id);
      return outcome;
    } finally {
      if (locked) await client.query("SELECT pg_advisory_unlock($1)", [ADMISSION_LOCK]).catch(() => undefined);
      client.release();
    }
  }

  /** (Re)sends a session's job; a job with this id already there makes this a no-op. */
  async enqueue(sessionId: string): Promise<void> {
    await this.boss.send(PLACEMENT_QUEUE, { sessionId } satisfies PlacementJob, { id: sessionId });
  }

  /** Takes jobs while this instance has a free slot. */
  startConsumer(supervisor: Supervisor): void {
    this.supervisor = supervisor;
    this.consuming = true;
    this.timer = setInterval(() => this.refresh(), CONSUMER_CHECK_MS);
    this.timer.unref();
    this.refresh();
  }

  /** Stops taking jobs (drain, shutdown); sessions already running are untouched. */
  async stopConsumer(): Promise<void> {
    this.consuming = false;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.refresh();
    await this.toggling;
  }

  /** Called when a local session ends: its slot is free again. */
  refresh(): void {
    this.toggling = this.toggling.then(async () => {
      const supervisor = this.supervisor;
      const want = this.consuming && supervisor !== null && supervisor.activeCount() < this.o.maxSessions && this.o.disk.room;
      if (want && this.workerId === null) {
        this.workerId = await this.boss.work<PlacementJob>(PLACEMENT_QUEUE, { batchSize: 1, localConcurrency: 1, pollingIntervalSeconds: 1, notifyPollingIntervalSeconds: 2 }, (jobs) => this.take(jobs));
      } else if (!want && this.workerId !== null) {
        const id = this.workerId;
        this.workerId = null;
        await this.boss.offWork(PLACEMENT_QUEUE, { id, wait: false });
      }
    }).catch((err: unknown) => this.o.logger.warn({ err }, "placement consumer could not be switched"));
  }

  private async take(jobs: { data: PlacementJob }[]): Promise<void> {
    const supervisor = this.supervisor;
    for (const job of jobs) {
      if (!supervisor || !this.consuming || !supervisor.reserve()) {
        // Full (or draining) since the fetch: back to the queue for another instance.
        this.refresh();
        throw new Error("no free slot on this instance");
      }
      let launched = false;
      try {
        // The heartbeat's verdict may be a moment old: the disk is asked again before the claim.
        if (!(await this.o.disk.check(supervisor.recordings()))) {
          this.refresh();
          throw new Error("no room in RECORDINGS_DIR on this instance");
        }
        const row = await this.claim(job.data.sessionId);
        if (!row) continue;
        launched = true;
        this.o.logger.info({ session_id: row.id }, "session placed on this instance");
        await supervisor.launch(row);
      } finally {
        if (!launched) supervisor.release();
      }
    }
    this.refresh();
  }

  /** The row, once this instance owns it; null when it is placed already or no longer waiting. */
  private async claim(sessionId: string): Promise<BotSession | null> {
    const { count } = await this.o.db.botSession.updateMany({ where: { id: sessionId, instanceId: null, status: "joining" }, data: { instanceId: this.o.instanceId } });
    return count === 1 ? this.o.repo.find(sessionId) : null;
  }

  async close(): Promise<void> {
    await this.stopConsumer();
    await this.boss.stop({ graceful: true, timeout: 5_000, close: true }).catch((err: unknown) => this.o.logger.warn({ err }, "placement queue did not stop cleanly"));
  }
}
