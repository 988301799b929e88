/**
 * Applies migrations to an SQLite file with better-sqlite3, writing Prisma-compatible
 * `_prisma_migrations` rows. Each migration runs in one IMMEDIATE transaction, so concurrent
 * starts serialise on SQLite's write lock and the loser sees the winner's row.
 *
 * Trap (../shared/database.md): Prisma's table redefinitions (DROP + copy) inside a transaction
 * with foreign keys on cascade-delete child rows, and `PRAGMA foreign_keys=OFF` is ignored inside
 * a transaction. So foreign keys go off before BEGIN, `foreign_key_check` runs before COMMIT, and
 * they come back on after.
 */
import { randomUUID } from "node:crypto";
import Database from "better-sqlite3";
import type { Logger } from "../../shared/log/logger.ts";
import { pendingMigrations, readMigrations, type AppliedRow } from "./migrations.ts";

const TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    TEXT PRIMARY KEY NOT NULL,
    "checksum"              TEXT NOT NULL,
    "finished_at"           DATETIME,
    "migration_name"        TEXT NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        DATETIME,
    "started_at"            DATETIME NOT NULL DEFAULT current_timestamp,
    "applied_steps_count"   INTEGER UNSIGNED NOT NULL DEFAULT 0
)`;

export async function migrateSqlite(file: string, logger: Logger, migrationsRoot?: string): Promise<string[]> {
  const all = await readMigrations("sqlite", migrationsRoot);
  const db = new Database(file, { timeout: 30_000 });
  const applied: string[] = [];
  try {
    db.pragma("journal_mode = WAL");
    db.exec(TABLE);
    for (;;) {
      const rows = db.prepare(`SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations"`).all() as AppliedRow[];
      const next = pendingMigrations(all, rows)[0];
      if (!next) break;
      db.pragma("foreign_keys = OFF");
      db.exec("BEGIN IMMEDIATE");
      try {
        // Another process may have applied it while we waited for the lock.
        const again = db.prepare(`SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations"`).all() as AppliedRow[];
        if (!pendingMigrations(all, again).some((m) => m.name === next.name)) {
          db.exec("COMMIT");
          continue;
        }
        const id = randomUUID();
        db.prepare(`INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at) VALUES (?, ?, ?, ?)`).run(id, next.checksum, next.name, Date.now());
        db.exec(next.sql);
        const broken = db.pragma("foreign_key_check") as unknown[];
        if (broken.length > 0) throw new Error(`foreign key check failed after ${next.name}: ${JSON.stringify(broken.slice(0, 3))}`);
        db.prepare(`UPDATE "_prisma_migrations" SET finished_at = ?, applied_steps_count = 1 WHERE id = ?`).run(Date.now(), id);
        db.exec("COMMIT");
        applied.push(next.name);
        logger.info({ migration: next.name }, "migration applied");
      } catch (error) {
        db.exec("ROLLBACK");
        // Recorded as failed (finished_at null) so the next start refuses, as Prisma does.
        db.prepare(`INSERT INTO "_prisma_migrations" (id, checksum, migration_name, logs, started_at) VALUES (?, ?, ?, ?, ?)`).run(
          randomUUID(),
          next.checksum,
          next.name,
          String((error as Error).message),
          Date.now(),
        );
        throw new Error(`migration ${next.name} failed: ${(error as Error).message}`, { cause: error });
      } finally {
        db.pragma("foreign_keys = ON");
      }
    }
  } finally {
    db.close();
  }
  return applied;
}
