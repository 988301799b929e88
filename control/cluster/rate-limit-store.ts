/**
 * Shared limits (issue #19): in cluster mode the auth rate limiter counts in PostgreSQL through
 * @acpr/rate-limit-postgresql (a Store for express-rate-limit, fixed windows in its own
 * `rate_limit` schema), so `LocalLogin:RateLimit` is one budget for the whole cluster, not one per
 * process. The lockout counters already live in the database (sign-in/lockout.ts).
 *
 * The package migrates its schema from its constructor without telling when it is done; the
 * start waits until its functions exist, so the first login never races the migration.
 */
import { PostgresStore } from "@acpr/rate-limit-postgresql";
import type { Store } from "express-rate-limit";
import pg from "pg";
import type { Logger } from "../../shared/log/logger.ts";

const READY_TIMEOUT_MS = 30_000;
const INCREMENT = "rate_limit.agg_increment(text,text,double precision,timestamptz)";

export interface SharedRateLimitStore {
  store: Store;
  /** After the limiter was built (its init opened the pool): connection errors are logged, not thrown. */
  watch(): void;
  close(): Promise<void>;
}

export async function sharedRateLimitStore(url: string, logger: Logger): Promise<SharedRateLimitStore> {
  const store = new PostgresStore({ connectionString: url, max: 4 }, "toamaisutaa-auth") as PostgresStore & { pool?: pg.Pool };
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    for (;;) {
      const { rows } = await client.query<{ ready: boolean }>(`SELECT to_regprocedure($1) IS NOT NULL AS ready`, [INCREMENT]);
      if (rows[0]?.ready) break;
      if (Date.now() > deadline) throw new Error("the shared rate-limit store's schema (rate_limit) was not created in time");
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await client.end();
  }
  return {
    store,
    watch() {
      store.pool?.on("error", (err: Error) => logger.warn({ err: err.message }, "rate-limit store: an idle connection was closed by the server"));
    },
    async close() {
      await store.pool?.end().catch(() => undefined);
    },
  };
}
