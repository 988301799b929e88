/**
 * Fresh databases for tests, on both providers. SQLite: a file in a temp folder. PostgreSQL: a
 * new database on TEST_DATABASE_URL's server (make test points it at 127.0.0.1:5432 or at a
 * private cluster it starts itself: scripts/test-postgres.sh), dropped afterwards.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

export type Provider = "sqlite" | "postgresql";

/** Providers to run database suites on: both unless TEST_PROVIDERS narrows it. */
export function providers(): Provider[] {
  const wanted = (process.env.TEST_PROVIDERS ?? "sqlite,postgresql").split(",").map((s) => s.trim());
  return (["sqlite", "postgresql"] as const).filter((p) => wanted.includes(p));
}

export const serverUrl = (): string => process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

export interface FreshDatabase {
  url: string;
  drop(): Promise<void>;
}

export async function freshDatabase(provider: Provider): Promise<FreshDatabase> {
  if (provider === "sqlite") {
    const dir = mkdtempSync(join(tmpdir(), "toa-sqlite-"));
    return { url: `file:${join(dir, "test.db")}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const name = `toa_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: serverUrl() });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl());
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: serverUrl() });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
