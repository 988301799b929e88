/**
 * The committed migration folders of a provider (prisma/migrations/<provider>/<name>/migration.sql)
 * with the checksum Prisma records: SHA-256 hex of the raw file bytes.
 */
import { createHash } from "node:crypto";
import { readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { projectPath } from "../../shared/runtime/layout.ts";

export type Provider = "sqlite" | "postgresql";

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

export const defaultMigrationsRoot = projectPath("prisma", "migrations");

export async function readMigrations(provider: Provider, root = defaultMigrationsRoot): Promise<Migration[]> {
  const dir = join(root, provider);
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries.filter((e) => e.isDirectory()).map((e) => e.name).sort();
  return Promise.all(
    names.map(async (name) => {
      const bytes = await readFile(join(dir, name, "migration.sql"));
      return { name, sql: bytes.toString("utf8"), checksum: createHash("sha256").update(bytes).digest("hex") };
    }),
  );
}

/** A failed migration left in the table: Prisma refuses to go on, and so do we. */
export class FailedMigrationError extends Error {
  override readonly name = "FailedMigrationError";
  constructor(readonly migration: string) {
    super(
      `migration ${migration} failed earlier and is recorded as failed in _prisma_migrations; repair the database, then mark it rolled back (set rolled_back_at) or delete its row`,
    );
  }
}

export interface AppliedRow {
  migration_name: string;
  checksum: string;
  finished_at: unknown;
  rolled_back_at: unknown;
}

/** Which migrations still need to run; throws on a recorded failure. */
export function pendingMigrations(all: Migration[], rows: AppliedRow[]): Migration[] {
  const failed = rows.find((r) => r.finished_at === null && r.rolled_back_at === null);
  if (failed) throw new FailedMigrationError(failed.migration_name);
  const done = new Set(rows.filter((r) => r.finished_at !== null && r.rolled_back_at === null).map((r) => r.migration_name));
  return all.filter((m) => !done.has(m.name));
}
