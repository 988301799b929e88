/**
 * RefreshStore on PostgreSQL, on the pool Prisma's adapter uses: two round trips, both named
 * prepared statements (parsed and planned once per connection).
 *
 * The rotation is one statement, so it is atomic without BEGIN/COMMIT round trips:
 *  - `fam` locks the family row only while it is not revoked (FOR UPDATE re-checks the condition
 *    on the newest row version, so a revocation committed meanwhile is seen);
 *  - `rotated` rotates the token only while `rotatedAt IS NULL` (of racing refreshes, the others
 *    wait on the row lock, re-check, and update nothing) and only under a live, locked family;
 *  - `touched` and `inserted` run only when the rotation happened.
 * Timestamps go in and out as UTC (db/postgres-dates.ts).
 */
import type { PostgresDriver } from "../../db/client.ts";
import { pgDate, pgUtcColumn, pgUtcParam } from "../../db/postgres-dates.ts";
import type { RefreshStore, RotationOutcome } from "./refresh-store.ts";
import { lookupSql, storedRefresh, type LookupRow } from "./refresh-store-lookup.ts";

const utc = pgUtcParam;

const LOOKUP = lookupSql(pgUtcColumn, "$1");

const ROTATE = `WITH fam AS (
    SELECT "id" FROM "RefreshFamily" WHERE "id" = $1::text AND "revokedAt" IS NULL FOR UPDATE
  ), rotated AS (
    UPDATE "RefreshToken" SET "rotatedAt" = ${utc("$3")}, "replacedBy" = $4::text
    WHERE "id" = $2::text AND "rotatedAt" IS NULL AND EXISTS (SELECT 1 FROM fam) RETURNING "id"
  ), touched AS (
    UPDATE "RefreshFamily" SET "lastUsedAt" = ${utc("$3")}, "userAgent" = $5::text, "ipAddress" = $6::text
    WHERE "id" IN (SELECT "id" FROM fam) AND EXISTS (SELECT 1 FROM rotated) RETURNING "id"
  ), inserted AS (
    INSERT INTO "RefreshToken" ("id", "familyId", "tokenHash", "createdAt", "expiresAt")
    SELECT $4::text, $1::text, $7::text, ${utc("$3")}, ${utc("$8")} WHERE EXISTS (SELECT 1 FROM touched) RETURNING "id"
  )
  SELECT EXISTS (SELECT 1 FROM fam) AS "live", EXISTS (SELECT 1 FROM inserted) AS "rotated"`;

export function postgresRefreshStore({ pool }: PostgresDriver): RefreshStore {
  return {
    async rotate(tokenHash, plan) {
      const { rows } = await pool.query<LookupRow>({ name: "auth-refresh-lookup", text: LOOKUP, values: [tokenHash] });
      const row = rows[0];
      if (!row) return null;
      const found = storedRefresh(row, pgDate);
      const r = plan(found);
      if (!r) return { found, outcome: "skipped" };
      const values = [found.family.id, found.token.id, r.now.toISOString(), r.successorId, r.client.userAgent, r.client.ipAddress, r.successorHash, r.successorExpiresAt.toISOString()];
      const result = await pool.query<{ live: boolean; rotated: boolean }>({ name: "auth-refresh-rotate", text: ROTATE, values });
      const { live, rotated } = result.rows[0] ?? { live: false, rotated: false };
      const outcome: RotationOutcome = !live ? "family-revoked" : rotated ? "rotated" : "lost";
      return { found, outcome };
    },
  };
}
