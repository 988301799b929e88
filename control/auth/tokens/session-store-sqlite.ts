/**
 * SessionStore on SQLite: one synchronous BEGIN IMMEDIATE transaction on Prisma's own connection
 * (db/sqlite-driver.ts), statements prepared once. Nothing interleaves with it, so the stamp and
 * profile read first are current when the rows are inserted.
 */
import type Database from "better-sqlite3";
import { sqliteDate, sqliteIso } from "../../db/sqlite-dates.ts";
import type { SqliteDriver } from "../../db/sqlite-driver.ts";
import { noSuchUser, profileSql, startedSession, type ProfileRow } from "./session-store-profile.ts";
import { StampMoved, type SessionStore } from "./session-store.ts";
import { SQLITE_INSERT_REFRESH_TOKEN } from "./profile-columns.ts";
import { preparedPerConnection } from "../../db/prepared.ts";

type Nullable = string | null;

interface Statements {
  profile: Database.Statement<[string], ProfileRow>;
  family: Database.Statement<[string, string, string, string, string, string, string, Nullable, Nullable, string, Nullable, Nullable]>;
  token: Database.Statement<[string, string, string, string, string]>;
}

function prepare(db: Database.Database): Statements {
  const profile = db.prepare<[string], ProfileRow>(profileSql((column) => column, "?"));
  // The connection returns BigInt integers (Prisma's setting); this row has only a 0/1.
  profile.safeIntegers(false);
  return {
    profile,
    family: db.prepare(`INSERT INTO "RefreshFamily" ("id", "userId", "createdAt", "lastUsedAt", "absoluteExpiresAt", "amr", "authTime",
      "twoFactorSource", "twoFactorAt", "securityStamp", "userAgent", "ipAddress") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    token: db.prepare(SQLITE_INSERT_REFRESH_TOKEN),
  };
}

export function sqliteSessionStore(driver: SqliteDriver): SessionStore {
  const statementsOf = preparedPerConnection(prepare);
  return {
    start(f) {
      return driver.transaction((db) => {
        const s = statementsOf(db);
        const row = s.profile.get(f.userId);
        if (!row) throw noSuchUser(f.userId);
        if (f.expectedStamp !== null && row.securityStamp !== f.expectedStamp) throw new StampMoved(f.userId);
        const now = sqliteIso(f.now);
        s.family.run(f.id, f.userId, now, now, sqliteIso(f.absoluteExpiresAt), f.amr, sqliteIso(f.authTime), f.twoFactorSource,
          f.twoFactorAt ? sqliteIso(f.twoFactorAt) : null, row.securityStamp, f.userAgent, f.ipAddress);
        s.token.run(f.firstToken.id, f.id, f.firstToken.tokenHash, now, sqliteIso(f.firstToken.expiresAt));
        return startedSession(f, row, sqliteDate);
      });
    },
  };
}
