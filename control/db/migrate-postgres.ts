/**
 * Applies migrations to PostgreSQL through `pg` itself: each migration in one transaction (the
 * adapter's executeScript splits on `;` and is not atomic, ../shared/database.md), all of it under
 * Prisma's own advisory lock so concurrent starts (several instances) apply each migration once.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import type { Logger } from "../../shared/log/logger.ts";
import { pendingMigrations, readMigrations, type AppliedRow } from "./migrations.ts";

/** The lock key Prisma Migrate itself takes, so our runner and Prisma's exclude each other. */
const PRISMA_ADVISORY_LOCK = 72707369;

const TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

export async function migratePostgres(url: string, logger: Logger, migrationsRoot?: string): Promise<string[]> {
  const all = await readMigrations("postgresql", migrationsRoot);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const applied: string[] = [];
  try {
    await client.query("SELECT pg_advisory_lock($1)", [PRISMA_ADVISORY_LOCK]);
    await client.query(TABLE);
    const { rows } = await client.query<AppliedRow>(`SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations"`);
    for (const next of pendingMigrations(all, rows)) {
      const id = randomUUID();
      try {
        await client.query("BEGIN");
        await client.query(`INSERT INTO "_prisma_migrations" (id, checksum, migration_name) VALUES ($1, $2, $3)`, [id, next.checksum, next.name]);
        await client.query(next.sql);
        await client.query(`UPDATE "_prisma_migrations" SET finished_at = now(), applied_steps_count = 1 WHERE id = $1`, [id]);
        await client.query("COMMIT");
        applied.push(next.name);
        logger.info({ migration: next.name }, "migration applied");
      } catch (error) {
        await client.query("ROLLBACK");
        await client.query(`INSERT INTO "_prisma_migrations" (id, checksum, migration_name, logs) VALUES ($1, $2, $3, $4)`, [
          randomUUID(),
          next.checksum,
          next.name,
          String((error as Error).message),
        ]);
        throw new Error(`migration ${next.name} failed: ${(error as Error).message}`, { cause: error });
      }
    }
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [PRISMA_ADVISORY_LOCK]).catch(() => {});
    await client.end();
  }
  return applied;
}
