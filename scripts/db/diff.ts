/**
 * `make db-diff NAME=add_x`: writes new migration SQL for both providers from the difference
 * between the committed migrations and prisma/models.prisma. Prints nothing to write when the
 * schema and the migrations already agree.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { PROVIDERS, migrationsDir, pendingSchemaChanges } from "./schema-engine.ts";

const name = (process.argv[2] ?? "change").replace(/[^a-z0-9_]/gi, "_").toLowerCase();
const stamp = new Date().toISOString().replace(/\D/g, "").slice(0, 14);

let wrote = 0;
for (const provider of PROVIDERS) {
  const sql = await pendingSchemaChanges(provider);
  if (sql === "") {
    console.log(`${provider}: schema and migrations agree, nothing to write`);
    continue;
  }
  const dir = join(migrationsDir(provider), `${stamp}_${name}`);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, "migration.sql"), sql);
  await writeFile(
    join(migrationsDir(provider), "migration_lock.toml"),
    `# Written by scripts/db/diff.ts; keep in version control.\nprovider = "${provider}"\n`,
  );
  console.log(`${provider}: wrote ${dir}/migration.sql`);
  wrote++;
}
// The PGlite and SQLite handles keep the event loop alive after the work is done.
process.exit(wrote >= 0 ? 0 : 1);
