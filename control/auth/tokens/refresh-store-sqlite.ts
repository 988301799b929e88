/**
 * RefreshStore on SQLite: the read and the rotation run as one synchronous BEGIN IMMEDIATE
 * transaction on Prisma's own connection (db/sqlite-driver.ts), with statements prepared once.
 * Nothing can interleave with it, so the read is current when the write runs; the write's
 * conditions (`rotatedAt IS NULL`, `revokedAt IS NULL`, checked by row count) stay all the same.
 * Timestamps are written exactly as Prisma's adapter writes them (db/sqlite-dates.ts).
 */
import type Database from "better-sqlite3";
import { sqliteDate, sqliteIso } from "../../db/sqlite-dates.ts";
import type { SqliteDriver } from "../../db/sqlite-driver.ts";
import type { RefreshStore, Rotation, RotationOutcome, StoredRefresh } from "./refresh-store.ts";
import { lookupSql, storedRefresh, type LookupRow } from "./refresh-store-lookup.ts";
import { SQLITE_INSERT_REFRESH_TOKEN } from "./profile-columns.ts";
import { preparedPerConnection } from "../../db/prepared.ts";

const iso = sqliteIso;

interface Statements {
  lookup: Database.Statement<[string], LookupRow>;
  rotate: Database.Statement<[string, string, string]>;
  touch: Database.Statement<[string, string | null, string | null, string]>;
  insert: Database.Statement<[string, string, string, string, string]>;
}

function prepare(db: Database.Database): Statements {
  const lookup = db.prepare<[string], LookupRow>(lookupSql((column) => column, "?"));
  // The connection returns BigInt integers (Prisma's setting); this row has only small ones.
  lookup.safeIntegers(false);
  return {
    lookup,
    rotate: db.prepare(`UPDATE "RefreshToken" SET "rotatedAt" = ?, "replacedBy" = ? WHERE "id" = ? AND "rotatedAt" IS NULL`),
    touch: db.prepare(`UPDATE "RefreshFamily" SET "lastUsedAt" = ?, "userAgent" = ?, "ipAddress" = ? WHERE "id" = ? AND "revokedAt" IS NULL`),
    insert: db.prepare(SQLITE_INSERT_REFRESH_TOKEN),
  };
}

/** Thrown inside the transaction to roll the rotation back when the family was revoked. */
class FamilyRevoked extends Error {}

function write(s: Statements, found: StoredRefresh, r: Rotation): RotationOutcome {
  const now = iso(r.now);
  if (s.rotate.run(now, r.successorId, found.token.id).changes !== 1) return "lost";
  if (s.touch.run(now, r.client.userAgent, r.client.ipAddress, found.family.id).changes !== 1) throw new FamilyRevoked();
  s.insert.run(r.successorId, found.family.id, r.successorHash, now, iso(r.successorExpiresAt));
  return "rotated";
}

export function sqliteRefreshStore(driver: SqliteDriver): RefreshStore {
  const statementsOf = preparedPerConnection(prepare);
  return {
    async rotate(tokenHash, plan) {
      let found: StoredRefresh | undefined;
      try {
        return await driver.transaction((db) => {
          const s = statementsOf(db);
          const row = s.lookup.get(tokenHash);
          if (!row) return null;
          found = storedRefresh(row, sqliteDate);
          const rotation = plan(found);
          return { found, outcome: rotation ? write(s, found, rotation) : "skipped" };
        });
      } catch (error) {
        // Rolled back: nothing of the rotation was written.
        if (error instanceof FamilyRevoked && found) return { found, outcome: "family-revoked" };
        throw error;
      }
    },
  };
}
