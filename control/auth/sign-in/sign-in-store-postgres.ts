/**
 * SignInStore on PostgreSQL, on the pool Prisma's adapter uses: one round trip each, named
 * prepared statements. The reservation is one UPDATE, so racing guesses serialise on the row
 * lock and each re-checks the conditions on the newest row version.
 */
import type { PostgresDriver } from "../../db/client.ts";
import { pgUtcParam } from "../../db/postgres-dates.ts";
import { CLEAR_FAILURES, CREDENTIAL_BY_EMAIL, CREDENTIAL_BY_USER_NAME, RESERVE_ATTEMPT, SECOND_FACTORS } from "./sign-in-store-sql.ts";
import type { SignInCredential, SignInStore } from "./sign-in-store.ts";

/** `$n` for each name in order of first use, with its cast. */
function numbered(types: Record<string, string>): (name: string) => string {
  const names = Object.keys(types);
  return (name) => {
    const type = types[name];
    if (type === undefined) throw new Error(`no parameter ${name}`);
    return type === "timestamptz" ? `$${names.indexOf(name) + 1}` : `$${names.indexOf(name) + 1}::${type}`;
  };
}

const KEY = numbered({ key: "text" });
const USER = numbered({ userId: "text" });
const RESERVE = numbered({ userId: "text", now: "timestamptz", windowStart: "timestamptz", max: "int", updatedAt: "timestamptz" });
const CLEAR = numbered({ userId: "text", updatedAt: "timestamptz" });

const SQL = {
  byUserName: CREDENTIAL_BY_USER_NAME(KEY),
  byEmail: CREDENTIAL_BY_EMAIL(KEY),
  secondFactors: SECOND_FACTORS(USER),
  reserve: RESERVE_ATTEMPT(RESERVE, pgUtcParam),
  clear: CLEAR_FAILURES(CLEAR, pgUtcParam),
};

export function postgresSignInStore({ pool }: PostgresDriver): SignInStore {
  return {
    async credential(key, byEmail) {
      const name = byEmail ? "auth-sign-in-by-email" : "auth-sign-in-by-user-name";
      const { rows } = await pool.query<SignInCredential>({ name, text: byEmail ? SQL.byEmail : SQL.byUserName, values: [key] });
      return rows[0] ?? null;
    },
    async secondFactors(userId) {
      const { rows } = await pool.query<{ totp: boolean; passkey: boolean }>({ name: "auth-sign-in-second-factors", text: SQL.secondFactors, values: [userId] });
      return { totp: rows[0]?.totp === true, passkey: rows[0]?.passkey === true };
    },
    async reserveAttempt(userId, w) {
      const values = [userId, w.now.toISOString(), w.windowStart.toISOString(), w.maxFailedAttempts, new Date().toISOString()];
      const { rowCount } = await pool.query({ name: "auth-sign-in-reserve", text: SQL.reserve, values });
      return rowCount === 1;
    },
    async clearFailures(userId) {
      await pool.query({ name: "auth-sign-in-clear", text: SQL.clear, values: [userId, new Date().toISOString()] });
    },
  };
}
