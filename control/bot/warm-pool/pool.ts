/**
 * The warm pool (issue #20): up to WARM_WORKERS workers kept ready with PulseAudio and Chromium
 * on a blank page (worker/session/warm.ts), so that `/join` only opens the meeting.
 *
 * - A warm worker is named by the id its session will take: it lives in that session's folder
 *   (`.sessions/<id>.work`), so orphan sweeps and crash recovery find its processes by the id as
 *   for any worker. A join that takes it creates its session with that id.
 * - Used once: the worker exits when its session ends; the pool never hands it out again.
 * - Never takes a slot a join needs: it holds at most `room()` workers (MAX_CONCURRENT_SESSIONS
 *   minus the reserved slots), dropping the extra ones when slots fill up, and refills in the
 *   background when they free.
 * - A warm worker that dies or fails to start is swept (processes, folder) and replaced, after a
 *   backoff when it keeps failing. close() stops and sweeps every idle one.
 *
 * The session runner sees only `WorkerSource` (acquire → a lease, or null → start cold), so that
 * a placement layer can decide where and when workers start without knowing about the pool.
 */
import { randomUUID } from "node:crypto";
import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import type { FromWorker } from "../../../shared/ipc/messages.ts";
import type { Logger } from "../../../shared/log/logger.ts";
import { compileCacheDirOf, journalDirOf, sessionPaths } from "../paths.ts";
import { killSessionProcesses } from "../supervisor/orphans.ts";
import { workerEntry } from "../supervisor/worker-bundle.ts";
import type { LaunchGate } from "../supervisor/launch-gate.ts";
import { forkWorker, type WorkerProcess } from "../supervisor/worker-process.ts";
import { within } from "../../../shared/timeout.ts";

/** What the session runner would have passed to forkWorker. */
export interface WorkerHandlers {
  onMessage: (message: FromWorker) => void;
  onExit: (exit: { code: number | null; signal: NodeJS.Signals | null }) => void;
  onHung: () => void;
}

export interface WarmLease {
  /** The id of the session this worker is for. */
  readonly id: string;
  /** The worker once warm, now sending to `handlers`; null when it failed (start cold then). */
  take(handlers: WorkerHandlers): Promise<WorkerProcess | null>;
  /** Not used after all (no session was created): back to the pool, still unused. */
  giveBack(): void;
}

/** Where a session's worker comes from: a ready one, or none (the caller forks one cold). */
export interface WorkerSource {
  acquire(): WarmLease | null;
}

export interface WarmPool extends WorkerSource {
  /** Sweeps what a previous run left of its warm workers, then fills. */
  start(): Promise<void>;
  /** Slots changed: refill or drop to fit. */
  update(): void;
  close(): Promise<void>;
}

export interface WarmPoolOptions {
  size: number;
  recordingsDir: string;
  workerModule: string;
  warm: { mic: boolean; chromiumPath: string; logLevel: string };
  logger: Logger;
  /** Turns to start Chromium, shared with the sessions' workers (supervisor/launch-gate.ts). */
  launchGate?: LaunchGate;
  /** Free slots: MAX_CONCURRENT_SESSIONS minus the reserved ones. */
  room(): number;
}

/** A warm worker that left on its own is replaced after this, doubling per failure in a row. */
const RETRY_MIN_MS = 1_000;
const RETRY_MAX_MS = 60_000;
/** close() lets a warm worker close Chromium and PulseAudio itself this long, then kills it. */
const STOP_WAIT_MS = 5_000;
const UUID_WORK_DIR = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.work$/i;

interface Entry {
  id: string;
  dir: string;
  proc: WorkerProcess;
  state: "starting" | "ready" | "leased" | "gone";
  /** Resolves true on `warmed`, false when the worker failed or left first. */
  warmed: Promise<boolean>;
  exited: Promise<void>;
  handlers: WorkerHandlers | null;
}

export function createWarmPool(options: WarmPoolOptions): WarmPool {
  const log = options.logger.child({ component: "warm-pool" });
  const entries = new Map<string, Entry>();
  let closed = options.size <= 0;
  let failures = 0;
  let retryTimer: NodeJS.Timeout | undefined;
  let spawning = 0;

  const idleEntries = () => [...entries.values()].filter((e) => e.state === "starting" || e.state === "ready");

  /** Kills what is left of a worker (its processes carry its folder) and removes its folder. */
  const sweep = async (entry: Entry): Promise<void> => {
    const paths = sessionPaths(options.recordingsDir, entry.id, "wav");
    await killSessionProcesses(paths.sessionDir);
    await rm(entry.dir, { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
  };

  const spawn = async (): Promise<void> => {
    spawning++;
    try {
      const entry = await fork();
      if (entry) entries.set(entry.id, entry);
    } catch (err) {
      log.error({ err }, "a warm worker could not be started");
      failures++;
    } finally {
      spawning--;
    }
  };

  const fork = async (): Promise<Entry | null> => {
    const entry0 = await workerEntry(options.workerModule, log);
    if (closed) return null;
    const id = randomUUID();
    const dir = sessionPaths(options.recordingsDir, id, "wav").workDir;
    let resolveWarmed!: (ok: boolean) => void;
    let resolveExited!: () => void;
    const warmed = new Promise<boolean>((r) => (resolveWarmed = r));
    const exited = new Promise<void>((r) => (resolveExited = r));
    const wlog = log.child({ warm_id: id });
    // Messages and exits go to the pool until a session takes the worker, then to its runner.
    const entry: Entry = {
      id,
      dir,
      state: "starting",
      warmed,
      exited,
      handlers: null,
      proc: forkWorker({
        ...entry0,
        sessionId: id,
        marker: dir,
        logger: wlog,
        launchGate: options.launchGate,
        compileCacheDir: compileCacheDirOf(options.recordingsDir),
        onMessage: (m) => {
          if (entry.handlers) return entry.handlers.onMessage(m);
          if (m.type === "warmed") {
            if (entry.state === "starting") entry.state = "ready";
            failures = 0;
            resolveWarmed(true);
            wlog.info({ pids: m.pids }, "warm worker ready");
          } else if (m.type === "initFailed") {
            wlog.error({ message: m.message }, "warm worker could not start");
            resolveWarmed(false);
          }
        },
        onExit: (e) => {
          resolveExited();
          if (entry.handlers) return entry.handlers.onExit(e);
          resolveWarmed(false);
          const leased = entry.state === "leased";
          const wasIdle = entry.state !== "gone";
          entry.state = "gone";
          entries.delete(id);
          if (wasIdle && !closed) {
            failures++;
            wlog.warn({ ...e }, "warm worker left before its meeting; replacing it");
          }
          // A leased one is swept by take(), which then starts the session's worker cold in the
          // same folder: a second sweep here could kill that new worker.
          if (leased) return update();
          void sweep(entry).then(() => update());
        },
        onHung: () => (entry.handlers ? entry.handlers.onHung() : entry.proc.kill()),
      }),
    };
    entry.proc.send({ type: "warm", sessionId: id, workDir: dir, ...options.warm });
    return entry;
  };

  /** Drops one idle worker (the youngest: the one furthest from ready). */
  const drop = (entry: Entry): void => {
    entry.state = "gone";
    entries.delete(entry.id);
    log.info({ warm_id: entry.id }, "dropping a warm worker: the slots are taken");
    entry.proc.send({ type: "stop", reason: "shutdown" });
    const timer = setTimeout(() => entry.proc.kill(), STOP_WAIT_MS);
    void entry.exited.then(() => clearTimeout(timer));
  };

  const update = (): void => {
    if (closed) return;
    const want = Math.max(0, Math.min(options.size, options.room()));
    const idle = idleEntries();
    for (const e of idle.slice(want).reverse()) drop(e);
    const missing = want - idle.length - spawning;
    if (missing <= 0 || retryTimer) return;
    const delay = failures === 0 ? 0 : Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** (failures - 1));
    const run = () => {
      retryTimer = undefined;
      if (closed) return;
      const now = Math.max(0, Math.min(options.size, options.room())) - idleEntries().length - spawning;
      const spawns = Array.from({ length: Math.max(0, now) }, () => spawn());
      void Promise.all(spawns).then(() => failures > 0 && update());
    };
    if (delay === 0) run();
    else retryTimer = setTimeout(run, delay);
  };

  const lease = (entry: Entry): WarmLease => {
    const previous = entry.state;
    entry.state = "leased";
    return {
      id: entry.id,
      async take(handlers) {
        if (await entry.warmed) {
          entry.handlers = handlers;
          entries.delete(entry.id);
          return entry.proc;
        }
        // It failed while this session waited: the caller starts a worker cold in the same folder.
        await entry.exited;
        await sweep(entry);
        return null;
      },
      giveBack() {
        if (entry.state !== "leased" || entry.handlers) return;
        entry.state = previous === "ready" || previous === "starting" ? previous : "starting";
        void entry.warmed.then((ok) => ok && entry.state === "starting" && (entry.state = "ready"));
        update();
      },
    };
  };

  return {
    acquire() {
      if (closed) return null;
      // A ready worker first; else one still starting, which is ahead of a cold start.
      const idle = idleEntries();
      const pick = idle.find((e) => e.state === "ready") ?? idle[0];
      if (!pick) return null;
      const l = lease(pick);
      queueMicrotask(update);
      return l;
    },
    async start() {
      if (closed) return;
      await sweepLeftovers(options.recordingsDir, log);
      update();
    },
    update,
    async close() {
      closed = true;
      clearTimeout(retryTimer);
      const idle = idleEntries();
      for (const e of idle) {
        e.state = "gone";
        entries.delete(e.id);
        e.proc.send({ type: "stop", reason: "shutdown" });
      }
      await Promise.all(
        idle.map(async (e) => {
          const inTime = (await within(e.exited.then(() => true), STOP_WAIT_MS)) === true;
          if (!inTime) e.proc.kill();
          await sweep(e);
        }),
      );
    },
  };
}

/**
 * A previous run's warm workers: folders `.sessions/<uuid>.work` with no journal (a session's
 * folder always has one; recovery has dealt with those). Their processes are killed, the folders
 * removed.
 */
async function sweepLeftovers(recordingsDir: string, log: Logger): Promise<void> {
  const journalDir = journalDirOf(recordingsDir);
  const names = await readdir(journalDir).catch(() => [] as string[]);
  const present = new Set(names);
  for (const name of names) {
    const id = UUID_WORK_DIR.exec(name)?.[1];
    if (!id || present.has(`${id}.journal`)) continue;
    const killed = await killSessionProcesses(join(journalDir, id));
    await rm(join(journalDir, name), { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
    log.info({ warm_id: id, killed }, "removed a warm worker left by the previous run");
  }
}
