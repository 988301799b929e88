/**
 * SQLite WAL checkpoints on a thread of their own instead of the event loop.
 *
 * In WAL mode a commit appends pages to the `-wal` file, and by default the committing connection
 * copies them back into the database file itself (a checkpoint, with two fsyncs) every 1,000
 * pages. Our one connection runs on the event loop (db/sqlite-driver.ts), so every request paid
 * for those copies and the whole loop stood still during the fsyncs: a rotation transaction
 * took 242-275 µs of wall time with them and 112-114 µs with checkpoints on this thread (20,000
 * rotations, 2-core VM; CPU time the same, the difference is waiting on the disk).
 *
 * A worker thread with its own connection runs PASSIVE checkpoints every INTERVAL_MS: they never
 * take a lock a writer or reader waits for, and a busy one is simply tried again. The connection
 * keeps its own automatic checkpoint as a backstop at BACKSTOP_PAGES: the WAL restarts from its
 * beginning only when a checkpoint has caught up with the last commit, which under a sustained
 * write load a background checkpoint rarely does, so the event loop still checkpoints once the
 * WAL reaches that size (by then the thread has copied nearly every page: only the fsyncs and a
 * few pages remain). At an idle moment the WAL restarts as before.
 */
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type Database from "better-sqlite3";
import type { Logger } from "../../shared/log/logger.ts";

const INTERVAL_MS = 100;
/** ~40 MB of WAL at 4 KiB pages: the most the file grows to under sustained writes. */
export const BACKSTOP_PAGES = 10_000;
/** SQLite's own default, restored when the thread is gone. */
const SQLITE_DEFAULT_AUTOCHECKPOINT = 1000;
const STOP_TIMEOUT_MS = 5000;

export interface Checkpointer {
  /** Stops the thread after its current checkpoint and closes its connection. */
  stop(): Promise<void>;
}

/**
 * The thread's program, CommonJS so it needs no loader: it opens its own connection (never waiting
 * for a lock: `timeout` 0) and checkpoints until told to stop. Failures other than "busy" are
 * reported once each; the thread keeps going.
 */
const PROGRAM = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.module);
const db = new Database(workerData.file, { timeout: 0, fileMustExist: true });
const reported = new Set();
const timer = setInterval(() => {
  try {
    db.pragma("wal_checkpoint(PASSIVE)");
  } catch (error) {
    if (error.code === "SQLITE_BUSY" || error.code === "SQLITE_LOCKED" || reported.has(error.code)) return;
    reported.add(error.code);
    parentPort.postMessage({ error: String(error.message) });
  }
}, workerData.intervalMs);
parentPort.once("message", () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

export function startCheckpointer(file: string, connection: Database.Database, logger: Logger): Checkpointer {
  const restoreAutocheckpoint = (): void => {
    if (connection.open) connection.pragma(`wal_autocheckpoint = ${SQLITE_DEFAULT_AUTOCHECKPOINT}`);
  };
  connection.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
  const worker = new Worker(PROGRAM, {
    eval: true,
    workerData: { file, intervalMs: INTERVAL_MS, module: createRequire(import.meta.url).resolve("better-sqlite3") },
  });
  // Never what keeps the process alive.
  worker.unref();
  let stopping = false;
  worker.on("message", (m: { error?: string }) => logger.warn({ err: m.error }, "database: background checkpoint failed"));
  worker.once("error", (error) => logger.warn({ err: error.message }, "database: the checkpoint thread failed; the connection checkpoints itself again"));
  const exited = new Promise<void>((resolve) => {
    worker.once("exit", () => {
      if (!stopping) restoreAutocheckpoint();
      resolve();
    });
  });
  return {
    async stop() {
      stopping = true;
      worker.postMessage("stop");
      const timeout = setTimeout(() => void worker.terminate(), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timeout);
    },
  };
}
