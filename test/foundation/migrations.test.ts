/**
 * Migrations: applied at startup on both providers, safe under concurrent starts, never losing
 * rows on an SQLite table redefinition, refusing to start after a failed migration, and in step
 * with prisma/models.prisma (a model changed without a migration fails here).
 */
import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import pg from "pg";
import { openDatabase } from "../../control/db/client.ts";
import { defaultMigrationsRoot, FailedMigrationError } from "../../control/db/migrations.ts";
import { migrateSqlite } from "../../control/db/migrate-sqlite.ts";
import { migratePostgres } from "../../control/db/migrate-postgres.ts";
import { freshDatabase, providers } from "../harness/databases.ts";
import { captureLogs } from "../harness/logs.ts";

const run = promisify(execFile);
const { logger } = captureLogs("warn");

async function appliedRows(url: string): Promise<Array<{ migration_name: string; finished_at: unknown }>> {
  if (url.startsWith("file:")) {
    const db = new Database(url.slice(5), { readonly: true });
    try {
      return db.prepare(`SELECT migration_name, finished_at FROM "_prisma_migrations" ORDER BY migration_name`).all() as never;
    } finally {
      db.close();
    }
  }
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(`SELECT migration_name, finished_at FROM "_prisma_migrations" ORDER BY migration_name`)).rows;
  } finally {
    await c.end();
  }
}

/** A copy of the committed migrations plus extra folders, for upgrade and failure cases. */
function migrationsWith(provider: string, extra: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "toa-mig-"));
  cpSync(join(defaultMigrationsRoot, provider), join(root, provider), { recursive: true });
  for (const [name, sql] of Object.entries(extra)) {
    mkdirSync(join(root, provider, name), { recursive: true });
    writeFileSync(join(root, provider, name, "migration.sql"), sql);
  }
  return root;
}

const migrate = (url: string, root?: string): Promise<string[]> =>
  url.startsWith("file:") ? migrateSqlite(url.slice(5), logger, root) : migratePostgres(url, logger, root);

for (const provider of providers()) {
  describe(`migrations on ${provider}`, () => {
    const drops: Array<() => Promise<void>> = [];
    after(async () => {
      for (const d of drops) await d();
    });

    it("a fresh database gets every migration and a usable client; a second start applies nothing", async () => {
      const fresh = await freshDatabase(provider);
      drops.push(fresh.drop);
      const database = await openDatabase(fresh.url, logger);
      await database.db.user.create({ data: { id: "u1", securityStamp: "s" } });
      assert.equal(await database.db.user.count(), 1);
      await database.close();
      const rows = await appliedRows(fresh.url);
      assert.ok(rows.length >= 1 && rows.every((r) => r.finished_at !== null));
      assert.deepEqual(await migrate(fresh.url), []);
    });

    it("concurrent starts apply each migration exactly once", async () => {
      const fresh = await freshDatabase(provider);
      drops.push(fresh.drop);
      const script = `import { openDatabase } from "./control/db/client.ts"; import { createLogger } from "./shared/log/logger.ts";
        const d = await openDatabase(process.argv[1], createLogger({ level: "silent" })); await d.close();`;
      await Promise.all(
        [1, 2, 3].map(() => run(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script, fresh.url], { cwd: new URL("../../", import.meta.url).pathname })),
      );
      const rows = await appliedRows(fresh.url);
      const names = rows.map((r) => r.migration_name);
      assert.equal(new Set(names).size, names.length, `duplicates: ${names.join(", ")}`);
      assert.ok(rows.every((r) => r.finished_at !== null));
    });

    it("an upgrade applies only the new migration and keeps the data", async () => {
      const fresh = await freshDatabase(provider);
      drops.push(fresh.drop);
      const database = await openDatabase(fresh.url, logger);
      await database.db.user.create({ data: { id: "u1", securityStamp: "s" } });
      await database.db.passwordCredential.create({ data: { userId: "u1", userName: "ann", normalizedUserName: "ann", passwordHash: "h" } });
      await database.close();
      // A table redefinition of the parent table, as Prisma writes it for SQLite: with foreign
      // keys on inside the transaction, the DROP would cascade and delete the credential.
      const sql =
        provider === "sqlite"
          ? `PRAGMA defer_foreign_keys=ON;
CREATE TABLE "new_User" ("id" TEXT NOT NULL PRIMARY KEY, "email" TEXT, "name" TEXT, "securityStamp" TEXT NOT NULL, "externalIssuer" TEXT, "externalSubject" TEXT, "externalHandle" TEXT, "reserved" BOOLEAN NOT NULL DEFAULT false, "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP, "updatedAt" DATETIME NOT NULL, "nickname" TEXT);
INSERT INTO "new_User" SELECT "id","email","name","securityStamp","externalIssuer","externalSubject","externalHandle","reserved","createdAt","updatedAt",NULL FROM "User";
DROP TABLE "User";
ALTER TABLE "new_User" RENAME TO "User";
CREATE UNIQUE INDEX "User_externalIssuer_externalSubject_key" ON "User"("externalIssuer", "externalSubject");`
          : `ALTER TABLE "User" ADD COLUMN "nickname" TEXT; UPDATE "User" SET "nickname" = 'x;y' WHERE "id" = 'u1';`;
      const root = migrationsWith(provider, { "29990101000000_redefine_user": sql });
      assert.deepEqual(await migrate(fresh.url, root), ["29990101000000_redefine_user"]);
      const reopened = await openDatabase(fresh.url, logger, { migrate: false });
      assert.equal(await reopened.db.passwordCredential.count(), 1, "the child row survived the redefinition");
      await reopened.close();
    });

    it("a failed migration is rolled back, recorded, and refuses the next start", async () => {
      const fresh = await freshDatabase(provider);
      drops.push(fresh.drop);
      const root = migrationsWith(provider, { "29990101000000_broken": `CREATE TABLE "Half" ("id" INTEGER);\nTHIS IS NOT SQL;` });
      await assert.rejects(migrate(fresh.url, root), /29990101000000_broken failed/);
      await assert.rejects(migrate(fresh.url, root), FailedMigrationError);
      const database = await openDatabase(fresh.url, logger, { migrate: false });
      const half = await database.db.$queryRawUnsafe<unknown[]>(
        provider === "sqlite" ? `SELECT name FROM sqlite_master WHERE name = 'Half'` : `SELECT tablename FROM pg_tables WHERE tablename = 'Half'`,
      );
      assert.equal(half.length, 0, "nothing half-written");
      await database.close();
    });

    it("the schema and the committed migrations agree", async () => {
      const result = await run(process.execPath, ["--import", "tsx", "scripts/db/check.ts", provider], { cwd: new URL("../../", import.meta.url).pathname }).then(
        (r) => ({ code: 0, out: r.stdout }),
        (e: { code: number; stdout: string }) => ({ code: e.code, out: e.stdout }),
      );
      assert.equal(result.code, 0, result.out);
    });
  });
}
