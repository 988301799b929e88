/**
 * SignInStore on SQLite, on Prisma's own connection (db/sqlite-driver.ts), statements prepared
 * once. Each is one statement, atomic by itself, run under the connection's lock like Prisma's
 * own queries, so it never runs inside another request's open transaction.
 */
import type Database from "better-sqlite3";
import { sqliteIso } from "../../db/sqlite-dates.ts";
import type { SqliteDriver } from "../../db/sqlite-driver.ts";
import { CLEAR_FAILURES, CREDENTIAL_BY_EMAIL, CREDENTIAL_BY_USER_NAME, RESERVE_ATTEMPT, SECOND_FACTORS } from "./sign-in-store-sql.ts";
import type { SignInCredential, SignInStore } from "./sign-in-store.ts";
import { preparedPerConnection } from "../../db/prepared.ts";

const named = (name: string): string => `@${name}`;
const asIs = (param: string): string => param;

interface Statements {
  byUserName: Database.Statement<[{ key: string }], SignInCredential>;
  byEmail: Database.Statement<[{ key: string }], SignInCredential>;
  secondFactors: Database.Statement<[{ userId: string }], { totp: number; passkey: number }>;
  reserve: Database.Statement<[{ userId: string; now: string; windowStart: string; max: number; updatedAt: string }]>;
  clear: Database.Statement<[{ userId: string; updatedAt: string }]>;
}

function prepare(db: Database.Database): Statements {
  const s: Statements = {
    byUserName: db.prepare(CREDENTIAL_BY_USER_NAME(named)),
    byEmail: db.prepare(CREDENTIAL_BY_EMAIL(named)),
    secondFactors: db.prepare(SECOND_FACTORS(named)),
    reserve: db.prepare(RESERVE_ATTEMPT(named, asIs)),
    clear: db.prepare(CLEAR_FAILURES(named, asIs)),
  };
  // The connection returns BigInt integers (Prisma's setting); these rows hold only 0/1.
  s.secondFactors.safeIntegers(false);
  return s;
}

export function sqliteSignInStore(driver: SqliteDriver): SignInStore {
  const statementsOf = preparedPerConnection(prepare);
  const run = <T>(work: (s: Statements) => T): Promise<T> => driver.run((db) => work(statementsOf(db)));
  return {
    credential(key, byEmail) {
      return run((s) => (byEmail ? s.byEmail : s.byUserName).get({ key }) ?? null);
    },
    secondFactors(userId) {
      return run((s) => {
        const row = s.secondFactors.get({ userId });
        return { totp: Boolean(row?.totp), passkey: Boolean(row?.passkey) };
      });
    },
    reserveAttempt(userId, w) {
      const params = { userId, now: sqliteIso(w.now), windowStart: sqliteIso(w.windowStart), max: w.maxFailedAttempts, updatedAt: sqliteIso(new Date()) };
      return run((s) => s.reserve.run(params).changes === 1);
    },
    async clearFailures(userId) {
      await run((s) => s.clear.run({ userId, updatedAt: sqliteIso(new Date()) }));
    },
  };
}
