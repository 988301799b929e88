/**
 * Direct better-sqlite3 access for hot paths, on the very connection Prisma's adapter uses, and
 * the lock that keeps that one connection's transactions apart (db/connection-lock.ts).
 *
 * Why not a second connection: Prisma's interactive transactions hold the write lock across
 * awaits. A second connection waiting on that lock would busy-wait *synchronously* (better-sqlite3
 * blocks the thread for `busy_timeout`) while the lock holder needs the same thread to finish:
 * a stall of up to the timeout. And a commit on a second connection between a Prisma transaction's
 * read and its write makes that write fail with SQLITE_BUSY_SNAPSHOT. One connection has neither
 * problem, provided nothing runs on it while someone else's transaction is open.
 *
 * That is what the lock is for. The adapter Prisma gets is wrapped so that every plain query,
 * script and interactive transaction (BEGIN to COMMIT/ROLLBACK) holds the connection's lock, and
 * the hot paths below take the same lock. Without it a plain write issued while another request's
 * transaction was open joined that transaction and was lost with its rollback (issue #14).
 *
 * The adapter does not expose its connection, so the factory is subclassed to keep the adapter
 * it hands to Prisma; `client` is the adapter's (untyped) field holding the better-sqlite3
 * handle, checked at open so an adapter upgrade that renames it fails at startup, not later.
 */
import { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
import Database from "better-sqlite3";
import { ConnectionLock } from "./connection-lock.ts";

type Adapter = Awaited<ReturnType<PrismaBetterSqlite3["connect"]>>;
type Transaction = Awaited<ReturnType<Adapter["startTransaction"]>>;

export interface SqliteDriver {
  kind: "sqlite";
  /**
   * Runs `work` synchronously inside one write transaction (BEGIN IMMEDIATE … COMMIT; rolled back
   * when it throws), holding the connection's lock like Prisma's own transactions.
   */
  transaction<T>(work: (db: Database.Database) => T): Promise<T>;
  /** Runs single statements (each atomic by itself) holding the connection's lock. */
  run<T>(work: (db: Database.Database) => T): Promise<T>;
  /** The connection itself, for settings (pragmas) only: statements go through `run`. */
  connection(): Database.Database;
}

/** The adapter factory Prisma gets; remembers the adapter of the latest `connect()`. */
export class SharedSqliteAdapterFactory extends PrismaBetterSqlite3 {
  #adapter: Adapter | undefined;
  #lock = new ConnectionLock();

  override async connect(): Promise<Adapter> {
    this.#lock = new ConnectionLock();
    this.#adapter = serialised(await super.connect(), this.#lock);
    return this.#adapter;
  }

  /** Call after the client's first query (which connects). */
  driver(): SqliteDriver {
    const adapter = this.#adapter;
    const connection = (adapter as { client?: unknown } | undefined)?.client;
    if (!adapter || !(connection instanceof Database)) {
      throw new Error("@prisma/adapter-better-sqlite3 no longer exposes its connection as `client`: update control/db/sqlite-driver.ts");
    }
    return sqliteDriver(connection, this.#lock);
  }
}

/** Every way Prisma reaches the connection, behind the lock (the adapter object itself is kept). */
function serialised(adapter: Adapter, lock: ConnectionLock): Adapter {
  const queryRaw = adapter.queryRaw.bind(adapter);
  const executeRaw = adapter.executeRaw.bind(adapter);
  const executeScript = adapter.executeScript.bind(adapter);
  const startTransaction = adapter.startTransaction.bind(adapter);
  adapter.queryRaw = (query) => lock.run(() => queryRaw(query));
  adapter.executeRaw = (query) => lock.run(() => executeRaw(query));
  adapter.executeScript = (script) => lock.run(() => executeScript(script));
  adapter.startTransaction = async (isolationLevel) => {
    const release = await lock.acquire();
    let tx: Transaction;
    try {
      tx = await startTransaction(isolationLevel);
    } catch (error) {
      release();
      throw error;
    }
    // Prisma ends the transaction with COMMIT/ROLLBACK through tx.executeRaw, then calls one of
    // these; only then may anyone else use the connection.
    const commit = tx.commit.bind(tx);
    const rollback = tx.rollback.bind(tx);
    tx.commit = () => commit().finally(release);
    tx.rollback = () => rollback().finally(release);
    return tx;
  };
  return adapter;
}

function sqliteDriver(db: Database.Database, lock: ConnectionLock): SqliteDriver {
  const immediate = db.transaction((work: (db: Database.Database) => unknown) => work(db)).immediate;
  return {
    kind: "sqlite",
    connection: () => db,
    async transaction(work) {
      return lock.runSync(() => immediate(work) as ReturnType<typeof work>);
    },
    async run(work) {
      return lock.runSync(() => work(db));
    },
  };
}
