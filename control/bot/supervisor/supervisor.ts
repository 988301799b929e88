/**
 * All sessions of this control plane: the MAX_CONCURRENT_SESSIONS slots, one SessionRunner per
 * running session, stop requests, and the graceful shutdown (stop every worker, wait the grace
 * period for their `finished` and storage, then the crash path for the rest).
 */
import type { BotSession } from "../../../prisma/generated/sqlite/client.ts";
import type { WorkerResponse } from "../../../shared/ipc/messages.ts";
import type { FinalizeDeps } from "./finalize.ts";
import { SessionRunner, type RunnerSettings } from "./session-runner.ts";
import { workerEntry } from "./worker-bundle.ts";

export interface Supervisor {
  /** Claims a slot synchronously (so concurrent joins cannot overshoot); false at the limit. */
  reserve(): boolean;
  release(): void;
  /** Starts a session in a reserved slot. */
  launch(row: BotSession): Promise<SessionRunner>;
  get(id: string): SessionRunner | undefined;
  /** Asks a running session to leave; resolves when it has ended or after `waitMs`. */
  stop(id: string, waitMs: number): Promise<boolean>;
  request(id: string, op: string, args: Record<string, unknown>): Promise<WorkerResponse>;
  activeCount(): number;
  shutdown(graceMs: number): Promise<void>;
}

/** After the grace period, killed sessions get this long to repair and store before the process leaves. */
const CRASH_PATH_BUDGET_MS = 15_000;

export function createSupervisor(options: { deps: Omit<FinalizeDeps, "signal">; settings: RunnerSettings; maxSessions: number }): Supervisor {
  const runners = new Map<string, SessionRunner>();
  const abort = new AbortController();
  const deps: FinalizeDeps = { ...options.deps, signal: abort.signal };
  const log = options.deps.logger.child({ component: "supervisor" });
  let reserved = 0;
  let closing = false;
  // Bundled now rather than at the first join, which would otherwise wait for it.
  void workerEntry(options.settings.workerModule, log);

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
    },
    async launch(row) {
      const runner = new SessionRunner(deps, options.settings, row);
      runners.set(row.id, runner);
      void runner.done.then(() => {
        runners.delete(row.id);
        reserved = Math.max(0, reserved - 1);
      });
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
    activeCount: () => runners.size,
    async shutdown(graceMs) {
      closing = true;
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
