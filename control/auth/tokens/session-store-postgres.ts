/**
 * SessionStore on PostgreSQL, on the pool Prisma's adapter uses: one round trip, a named prepared
 * statement. Data-modifying CTEs make it atomic without BEGIN/COMMIT: the family is inserted from
 * the profile row (so it records the stamp read in the same statement, and nothing is inserted
 * for a user that does not exist), the first token from the inserted family.
 */
import type { PostgresDriver } from "../../db/client.ts";
import { pgDate, pgUtcColumn, pgUtcParam as utc } from "../../db/postgres-dates.ts";
import { noSuchUser, profileSql, startedSession, type ProfileRow } from "./session-store-profile.ts";
import { StampMoved, type SessionStore } from "./session-store.ts";

/**
 * `FOR SHARE OF u`: a credential change updates the user's stamp before it revokes the families
 * (passwords/credential-change.ts). Either that update waits for this statement (and then finds
 * and revokes the family inserted here), or this one waits for the change to commit and reads the
 * new stamp, so `$14` no longer matches and nothing is inserted.
 */
const START = `WITH p AS (${profileSql(pgUtcColumn, "$1::text")} FOR SHARE OF u
  ), fam AS (
    INSERT INTO "RefreshFamily" ("id", "userId", "createdAt", "lastUsedAt", "absoluteExpiresAt", "amr", "authTime",
      "twoFactorSource", "twoFactorAt", "securityStamp", "userAgent", "ipAddress")
    SELECT $2::text, $1::text, ${utc("$3")}, ${utc("$3")}, ${utc("$4")}, $5::text, ${utc("$6")},
      $7::text, ${utc("$8")}, p."securityStamp", $9::text, $10::text FROM p
    WHERE $14::text IS NULL OR p."securityStamp" = $14::text RETURNING "id"
  ), tok AS (
    INSERT INTO "RefreshToken" ("id", "familyId", "tokenHash", "createdAt", "expiresAt")
    SELECT $11::text, fam."id", $12::text, ${utc("$3")}, ${utc("$13")} FROM fam RETURNING "id"
  )
  SELECT p.*, EXISTS (SELECT 1 FROM tok) AS "created" FROM p`;

export function postgresSessionStore({ pool }: PostgresDriver): SessionStore {
  return {
    async start(f) {
      const values = [
        f.userId, f.id, f.now.toISOString(), f.absoluteExpiresAt.toISOString(), f.amr, f.authTime.toISOString(),
        f.twoFactorSource, f.twoFactorAt?.toISOString() ?? null, f.userAgent, f.ipAddress,
        f.firstToken.id, f.firstToken.tokenHash, f.firstToken.expiresAt.toISOString(), f.expectedStamp,
      ];
      const { rows } = await pool.query<ProfileRow & { created: boolean }>({ name: "auth-session-start", text: START, values });
      const row = rows[0];
      if (!row) throw noSuchUser(f.userId);
      if (!row.created) throw new StampMoved(f.userId);
      return startedSession(f, row, pgDate);
    },
  };
}
