/**
 * Opens the database named by DATABASE_URL: `file:<path>` is embedded SQLite (better-sqlite3),
 * `postgres://` is PostgreSQL (pg pool). Migrations are applied first.
 *
 * Both generated clients come from one models file, so their model APIs are identical; the
 * PostgreSQL client is typed as the SQLite one (`Db`) rather than duplicating every signature.
 * Code must therefore stay inside what both providers support (no `mode: "insensitive"`, no
 * `skipDuplicates`): normalise values before storing them instead.
 */
import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { Logger } from "../../shared/log/logger.ts";
import type { Pool } from "pg";
import { PrismaClient as SqliteClient } from "../../prisma/generated/sqlite/client.ts";
import { migratePostgres } from "./migrate-postgres.ts";
import { migrateSqlite } from "./migrate-sqlite.ts";
import type { SqliteDriver } from "./sqlite-driver.ts";

export type Db = SqliteClient;

/** The pool Prisma's adapter runs on, shared for hot paths that skip Prisma. */
export interface PostgresDriver {
  kind: "postgresql";
  pool: Pool;
}

/**
 * The driver under Prisma, for the few hot paths where Prisma's per-query cost (~1.2 ms measured,
 * issue #3) is the wall. Everything else goes through `db`.
 */
export type DbDriver = SqliteDriver | PostgresDriver;

export interface Database {
  db: Db;
  provider: "sqlite" | "postgresql";
  driver: DbDriver;
  /** Cheap round trip for /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export function sqlitePath(url: string): string {
  const path = url.replace(/^file:/, "").replace(/\?.*$/, "");
  return path === ":memory:" ? path : resolve(path);
}

export async function openDatabase(url: string, logger: Logger, options: { migrate?: boolean } = {}): Promise<Database> {
  const migrate = options.migrate ?? true;
  if (url.startsWith("file:")) {
    const file = sqlitePath(url);
    if (file !== ":memory:") mkdirSync(dirname(file), { recursive: true });
    if (migrate) await migrateSqlite(file, logger);
    const { SharedSqliteAdapterFactory } = await import("./sqlite-driver.ts");
    // busy timeout: writers from several processes (tests, CLI) wait instead of failing.
    const adapter = new SharedSqliteAdapterFactory({ url: file, timeout: 10_000 });
    const db = new SqliteClient({ adapter });
    await db.$queryRawUnsafe("PRAGMA synchronous = NORMAL");
    await db.$queryRawUnsafe("PRAGMA foreign_keys = ON");
    const driver = adapter.driver();
    const { startCheckpointer } = await import("./sqlite-checkpointer.ts");
    // An in-memory database has no WAL to checkpoint.
    const checkpointer = file === ":memory:" ? undefined : startCheckpointer(file, driver.connection(), logger);
    return {
      db,
      provider: "sqlite",
      driver,
      ping: async () => void (await db.$queryRawUnsafe("SELECT 1")),
      close: async () => {
        await checkpointer?.stop();
        await db.$disconnect();
      },
    };
  }
  if (migrate) await migratePostgres(url, logger);
  const { PrismaPg } = await import("@prisma/adapter-pg");
  const { default: pg } = await import("pg");
  const { PrismaClient: PgClient } = await import("../../prisma/generated/postgresql/client.ts");
  // One pool for Prisma and the hot paths: the server's connection budget is not doubled.
  const pool = new pg.Pool({ connectionString: url, max: 16 });
  // An idle connection the server ends (restart, failover, DROP DATABASE ... FORCE) emits
  // 'error' on the pool; unhandled, that would crash the process. The pool replaces it.
  pool.on("error", (err) => logger.warn({ err: err.message }, "database: an idle connection was closed by the server"));
  const pgClient = new PgClient({ adapter: new PrismaPg(pool) });
  const db = pgClient as unknown as Db;
  return {
    db,
    provider: "postgresql",
    driver: { kind: "postgresql", pool },
    ping: async () => void (await db.$queryRawUnsafe("SELECT 1")),
    async close() {
      await db.$disconnect();
      await pool.end();
    },
  };
}

/** True when an error is a unique-constraint violation (Prisma P2002), on either provider. */
export function isUniqueViolation(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === "P2002";
}
