/**
 * All sessions of this control plane: the MAX_CONCURRENT_SESSIONS slots, one SessionRunner per
 * running session, stop requests, and the graceful shutdown (stop every worker, wait the grace
 * period for their `finished` and storage, then the crash path for the rest).
 */
import type { BotSession } from "../../../prisma/generated/sqlite/client.ts";
import type { WorkerResponse } from "../../../shared/ipc/messages.ts";
import type { FinalizeDeps } from "./finalize.ts";
import { createWarmPool, type WarmLease } from "../warm-pool/pool.ts";
import { createLaunchGate } from "./launch-gate.ts";
import { SessionRunner, type RunnerSettings } from "./session-runner.ts";
import { workerEntry } from "./worker-bundle.ts";
import type { RunningRecording } from "../disk/space.ts";
import { addBotSource, metrics } from "../../metrics/index.ts";

export interface Supervisor {
  /** Claims a slot synchronously (so concurrent joins cannot overshoot); false at the limit. */
  reserve(): boolean;
  release(): void;
  /**
   * A warm worker for the session about to be created in a reserved slot (its id becomes the
   * session id), or null: the session then starts its worker cold. Call right after reserve().
   */
  acquireWarm(): WarmLease | null;
  /** Starts a session in a reserved slot, on the leased warm worker when one is given. */
  launch(row: BotSession, lease?: WarmLease | null): Promise<SessionRunner>;
  get(id: string): SessionRunner | undefined;
  /** Asks a running session to leave; resolves when it has ended or after `waitMs`. */
  stop(id: string, waitMs: number): Promise<boolean>;
  request(id: string, op: string, args: Record<string, unknown>): Promise<WorkerResponse>;
  activeCount(): number;
  /** Ids of the sessions whose worker still runs. */
  sessionIds(): string[];
  /** The worker has gone and the recording is still being stored (a slow or down store). */
  pending(id: string): boolean;
  /** Sessions whose worker still runs (they may still write to RECORDINGS_DIR). */
  recordings(): RunningRecording[];
  shutdown(graceMs: number): Promise<void>;
}

/** After the grace period, killed sessions get this long to repair and store before the process leaves. */
const CRASH_PATH_BUDGET_MS = 15_000;

export function createSupervisor(options: {
  deps: Omit<FinalizeDeps, "signal">;
  settings: Omit<RunnerSettings, "launchGate">;
  maxSessions: number;
  warmWorkers?: number;
  /** BROWSER_STARTS_AT_ONCE (0: one per CPU core). */
  browserStartsAtOnce?: number;
}): Supervisor {
  const runners = new Map<string, SessionRunner>();
  const abort = new AbortController();
  const deps: FinalizeDeps = { ...options.deps, signal: abort.signal };
  const log = options.deps.logger.child({ component: "supervisor" });
  let reserved = 0;
  let closing = false;
  const removeSource = addBotSource({ active: () => runners.size, workerMarkers: () => [...runners.values()].filter((r) => !r.ended).map((r) => r.paths.sessionDir) });
  // Bundled now rather than at the first join, which would otherwise wait for it.
  void workerEntry(options.settings.workerModule, log);
  const { mic, chromiumPath, logLevel } = options.settings.init;
  const launchGate = createLaunchGate(options.browserStartsAtOnce ?? 0);
  const settings: RunnerSettings = { ...options.settings, launchGate };
  const pool = createWarmPool({
    launchGate,
    size: options.warmWorkers ?? 0,
    recordingsDir: options.settings.recordingsDir,
    workerModule: options.settings.workerModule,
    warm: { mic: mic.enabled, chromiumPath, logLevel },
    logger: options.deps.logger,
    room: () => (closing ? 0 : options.maxSessions - reserved),
  });
  void pool.start().catch((err: unknown) => log.error({ err }, "the warm pool could not start"));

  const runnersDone = (): Promise<unknown> => Promise.all([...runners.values()].map((r) => r.done));
  const wait = (p: Promise<unknown>, ms: number): Promise<boolean> =>
    new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      void p.then(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });

  return {
    reserve() {
      if (closing || reserved >= options.maxSessions) return false;
      reserved++;
      return true;
    },
    release() {
      reserved = Math.max(0, reserved - 1);
      pool.update();
    },
    acquireWarm: () => (closing ? null : pool.acquire()),
    async launch(row, lease) {
      const runner = new SessionRunner(deps, settings, row, lease ?? null);
      metrics.joined();
      runners.set(row.id, runner);
      // The slot is the worker's: it comes back when the worker has gone, while a slow or
      // unreachable store keeps the upload (and the runner) going in the background.
      void runner.workerGone.then(() => {
        reserved = Math.max(0, reserved - 1);
        pool.update();
      });
      void runner.done.then(() => runners.delete(row.id));
      await runner.start();
      return runner;
    },
    get: (id) => runners.get(id),
    async stop(id, waitMs) {
      const runner = runners.get(id);
      if (!runner) return false;
      runner.stop("stopped_by_api");
      await wait(runner.done, waitMs);
      return true;
    },
    request(id, op, args) {
      const runner = runners.get(id);
      if (!runner) return Promise.reject(new Error(`session ${id} is not running here`));
      return runner.request(op, args);
    },
    activeCount: () => [...runners.values()].filter((r) => !r.ended).length,
    sessionIds: () => [...runners.values()].filter((r) => !r.ended).map((r) => r.id),
    pending: (id) => runners.get(id)?.ended ?? false,
    recordings: () => [...runners.values()].filter((r) => !r.ended).map((r) => ({ record: r.record, format: r.format, path: r.paths.recording })),
    async shutdown(graceMs) {
      closing = true;
      void runnersDone().then(removeSource);
      await pool.close();
      const all = [...runners.values()];
      if (all.length === 0) return;
      log.info({ sessions: all.length, grace_ms: graceMs }, "stopping sessions for shutdown");
      for (const r of all) r.stop("shutdown");
      const allDone = Promise.all(all.map((r) => r.done));
      if (await wait(allDone, graceMs)) return;
      const left = all.filter((r) => runners.has(r.id));
      // Sessions whose worker is gone are only waiting for the store: killing gives them nothing.
      const running = left.filter((r) => !r.ended);
      if (running.length > 0) {
        log.warn({ sessions: running.map((r) => r.id) }, "sessions did not finish within the grace period; killing them");
        for (const r of running) r.kill();
        if (await wait(allDone, CRASH_PATH_BUDGET_MS)) return;
      }
      log.warn({ sessions: left.filter((r) => runners.has(r.id)).map((r) => r.id) }, "recordings not stored yet; the next start resumes their upload");
      // Uploads still retrying stop here; their journals stay unfinished for the next start.
      abort.abort();
      await wait(allDone, 5_000);
    },
  };
}
