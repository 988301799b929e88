/**
 * Drives Prisma's schema engine (WebAssembly build) from Node, so migration SQL can be produced
 * with no network access: the native engine that `prisma migrate` downloads cannot be fetched
 * here (see ../shared/database.md). Used by `make db-diff` and by the schema-drift test.
 */
import { readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { bindMigrationAwareSqlAdapterFactory } from "@prisma/driver-adapter-utils";
import type { SqlMigrationAwareDriverAdapterFactory, SqlDriverAdapter } from "@prisma/driver-adapter-utils";
import type { SchemaEngine } from "@prisma/schema-engine-wasm";
import { createRequire } from "node:module";

export type Provider = "sqlite" | "postgresql";
export const PROVIDERS: readonly Provider[] = ["sqlite", "postgresql"];

const root = new URL("../../", import.meta.url).pathname;
export const prismaDir = join(root, "prisma");
export const migrationsDir = (provider: Provider): string => join(prismaDir, "migrations", provider);

type DiffTarget = Parameters<SchemaEngine["diff"]>[0]["from"];

/** The provider's schema files (its base + the shared models) as the engine wants them. */
export async function schemaFiles(provider: Provider): Promise<Array<{ path: string; content: string }>> {
  const paths = [join(prismaDir, provider, "base.prisma"), join(prismaDir, "models.prisma")];
  return Promise.all(paths.map(async (path) => ({ path, content: await readFile(path, "utf8") })));
}

/** Every migration folder of a provider, in name order, as the engine's `migrations` target. */
export async function migrationsTarget(provider: Provider): Promise<DiffTarget> {
  const baseDir = migrationsDir(provider);
  const names = (await readdir(baseDir, { withFileTypes: true }).catch(() => []))
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
  if (names.length === 0) return { tag: "empty" };
  const migrationDirectories = await Promise.all(
    names.map(async (name) => ({
      path: name,
      migrationFile: {
        path: "migration.sql",
        content: { tag: "ok" as const, value: await readFile(join(baseDir, name, "migration.sql"), "utf8") },
      },
    })),
  );
  const lockPath = join(baseDir, "migration_lock.toml");
  const lock = await readFile(lockPath, "utf8").catch(() => null);
  return {
    tag: "migrations",
    baseDir,
    lockfile: { path: lockPath, content: lock },
    shadowDbInitScript: "",
    migrationDirectories,
  };
}

/**
 * A shadow-database adapter factory of the right family. SQLite: in-memory better-sqlite3.
 * PostgreSQL: in-memory PGlite, whose output was measured byte-identical to a real server.
 */
async function shadowFactory(provider: Provider): Promise<SqlMigrationAwareDriverAdapterFactory> {
  if (provider === "sqlite") {
    const { PrismaBetterSqlite3 } = await import("@prisma/adapter-better-sqlite3");
    const make = () => new PrismaBetterSqlite3({ url: ":memory:" });
    const base = make();
    return {
      provider: base.provider,
      adapterName: base.adapterName,
      connect: async () => routeScripts(await make().connect()),
      connectToShadowDb: async () => routeScripts(await make().connect()),
    };
  }
  const { PGlite } = await import("@electric-sql/pglite");
  const { PrismaPGlite } = await import("pglite-prisma-adapter");
  const make = (): SqlDriverAdapterFactoryLike => new PrismaPGlite(new PGlite()) as unknown as SqlDriverAdapterFactoryLike;
  const base = make();
  return {
    provider: base.provider,
    adapterName: base.adapterName,
    connect: () => make().connect(),
    connectToShadowDb: () => make().connect(),
  };
}

type SqlDriverAdapterFactoryLike = { provider: "postgres"; adapterName: string; connect(): Promise<SqlDriverAdapter> };

/**
 * Replaying migrations on SQLite sends whole multi-statement scripts through `executeRaw`,
 * which better-sqlite3 refuses ("more than one statement"): route argument-less calls to
 * `executeScript` (measured, ../shared/database.md).
 */
function routeScripts(adapter: SqlDriverAdapter): SqlDriverAdapter {
  const executeRaw = adapter.executeRaw.bind(adapter);
  adapter.executeRaw = async (query) => {
    if (query.args.length === 0) {
      await adapter.executeScript(query.sql);
      return 0;
    }
    return executeRaw(query);
  };
  return adapter;
}

/**
 * Node 20 cannot import a `.wasm` module, so the package's entry point fails: instantiate the
 * engine by hand with its JS glue as the import object (../shared/database.md).
 */
async function loadEngine(): Promise<typeof SchemaEngine> {
  const pkgDir = join(createRequire(import.meta.url).resolve("@prisma/schema-engine-wasm"), "..");
  const glue = (await import(join(pkgDir, "schema_engine_bg.js"))) as Record<string, unknown> & {
    __wbg_set_wasm(exports: WebAssembly.Exports): void;
    SchemaEngine: typeof SchemaEngine;
  };
  const bytes = await readFile(join(pkgDir, "schema_engine_bg.wasm"));
  const { instance } = await WebAssembly.instantiate(bytes, { "./schema_engine_bg.js": glue as WebAssembly.ModuleImports });
  glue.__wbg_set_wasm(instance.exports);
  (instance.exports.__wbindgen_start as () => void)();
  return glue.SchemaEngine;
}

let engineClass: Promise<typeof SchemaEngine> | undefined;

/** Runs one diff and returns the SQL script ("" when nothing differs). */
export async function diffSql(provider: Provider, from: DiffTarget, to: DiffTarget): Promise<string> {
  const files = await schemaFiles(provider);
  engineClass ??= loadEngine();
  const engine = await (await engineClass).new(
    { datamodels: files.map((f) => [f.path, f.content]) } as never,
    () => {},
    bindMigrationAwareSqlAdapterFactory(await shadowFactory(provider)),
  );
  try {
    const result = await engine.diff({
      from,
      to,
      script: true,
      exitCode: null,
      filters: { externalTables: [], externalEnums: [] },
    } as never);
    const sql = result.stdout ?? "";
    return /^\s*(--[^\n]*\n\s*)*-- This is an empty migration\.\s*$/.test(sql) || sql.trim() === "" ? "" : sql;
  } finally {
    engine.free();
  }
}

/** SQL that takes the database from the state of the committed migrations to the schema. */
export async function pendingSchemaChanges(provider: Provider): Promise<string> {
  const current = { tag: "schemaDatamodel" as const, files: await schemaFiles(provider) };
  return diffSql(provider, await migrationsTarget(provider), current);
}
