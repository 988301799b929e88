/**
 * Direct better-sqlite3 access for hot paths, on the very connection Prisma's adapter uses.
 *
 * Why not a second connection: Prisma's interactive transactions hold the write lock across
 * awaits. A second connection waiting on that lock would busy-wait *synchronously* (better-sqlite3
 * blocks the thread for `busy_timeout`) while the lock holder needs the same thread to finish:
 * a stall of up to the timeout. And a commit on a second connection between a Prisma transaction's
 * read and its write makes that write fail with SQLITE_BUSY_SNAPSHOT. One connection has neither
 * problem, and a synchronous unit of work on it cannot interleave with anything else in-process.
 *
 * The adapter does not expose its connection, so the factory is subclassed to keep the adapter
 * it hands to Prisma; `client` is the adapter's (untyped) field holding the better-sqlite3
 * handle, checked at open so an adapter upgrade that renames it fails at startup, not later.
 */
import { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
import Database from "better-sqlite3";

type Adapter = Awaited<ReturnType<PrismaBetterSqlite3["connect"]>>;

export interface SqliteDriver {
  kind: "sqlite";
  /**
   * Runs `work` synchronously inside one write transaction (BEGIN IMMEDIATE … COMMIT; rolled back
   * when it throws), serialised with Prisma's interactive transactions on the same connection.
   */
  transaction<T>(work: (db: Database.Database) => T): Promise<T>;
  /**
   * The connection itself, for single statements (each atomic by itself): they run as Prisma's
   * own plain queries do, which take no lock either (only its interactive transactions do).
   */
  connection(): Database.Database;
}

/** The adapter factory Prisma gets; remembers the adapter of the latest `connect()`. */
export class SharedSqliteAdapterFactory extends PrismaBetterSqlite3 {
  #adapter: Adapter | undefined;

  override async connect(): Promise<Adapter> {
    this.#adapter = await super.connect();
    return this.#adapter;
  }

  /** Call after the client's first query (which connects). */
  driver(): SqliteDriver {
    const adapter = this.#adapter;
    const connection = (adapter as { client?: unknown } | undefined)?.client;
    if (!adapter || !(connection instanceof Database)) {
      throw new Error("@prisma/adapter-better-sqlite3 no longer exposes its connection as `client`: update control/db/sqlite-driver.ts");
    }
    return sqliteDriver(connection, adapter);
  }
}

function sqliteDriver(db: Database.Database, adapter: Adapter): SqliteDriver {
  const immediate = db.transaction((work: (db: Database.Database) => unknown) => work(db)).immediate;
  return {
    kind: "sqlite",
    connection: () => db,
    async transaction(work) {
      // No Prisma transaction open: run now, without yielding, so nothing can interleave.
      if (!db.inTransaction) return immediate(work) as ReturnType<typeof work>;
      // A Prisma interactive transaction is open on this connection: queue on the adapter's own
      // transaction mutex (which opens a plain BEGIN once it is our turn) instead of joining it.
      const tx = await adapter.startTransaction();
      try {
        const result = work(db);
        db.exec("COMMIT");
        return result;
      } catch (error) {
        if (db.inTransaction) db.exec("ROLLBACK");
        throw error;
      } finally {
        // Both only release the adapter's mutex; the SQL above ended the transaction.
        await tx.commit();
      }
    },
  };
}
