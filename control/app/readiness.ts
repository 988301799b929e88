/**
 * Readiness by part. Each feature with its own dependencies is a part (`auth`: the database;
 * `bot`: the database, Chromium, PulseAudio and the recording store), so a load balancer in front
 * of sign-in asks `/readyz/auth` and a storage outage does not take sign-in out of rotation;
 * `/readyz` is the whole (every part). From the moment shutdown begins every part reports
 * `shutdown`, so the instance leaves rotation at once.
 */
import type { Database } from "../db/client.ts";
import type { MountedFeature } from "./feature.ts";
import { DATABASE_UNREACHABLE } from "../http/database-unreachable.ts";

export type Problems = Record<string, string>;

export interface ReadinessReport {
  /** Every part's problems together (what `/readyz` has always named). */
  problems: Problems;
  parts: Record<string, Problems>;
}

export interface Readiness {
  readonly parts: readonly string[];
  check(): Promise<ReadinessReport>;
  /** Shutdown has begun: every part is unready from now on. */
  drain(): void;
}

export function createReadiness(database: Database, features: { name: string; mounted: MountedFeature }[]): Readiness {
  let draining = false;
  return {
    parts: features.map((f) => f.name),
    drain() {
      draining = true;
    },
    async check() {
      const shared: Problems = {};
      if (draining) shared.shutdown = "the service is shutting down";
      const [db, ...own] = await Promise.all([
        // Unauthenticated: the cause, never the driver's text (database name, query).
        database.ping().then(
          () => null,
          () => DATABASE_UNREACHABLE,
        ),
        ...features.map((f) => (f.mounted.ready?.() ?? Promise.resolve({})).catch((e: Error) => ({ feature: e.message }))),
      ]);
      if (db !== null) shared.database = db;
      const parts: Record<string, Problems> = {};
      const problems: Problems = { ...shared };
      features.forEach((f, i) => {
        parts[f.name] = { ...shared, ...own[i] };
        Object.assign(problems, own[i]);
      });
      return { problems, parts };
    },
  };
}
