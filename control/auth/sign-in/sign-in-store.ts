/**
 * The reads and writes of a password sign-in, on the driver under Prisma like the refresh and
 * session stores (tokens/refresh-store.ts): at ~1.2 ms of event-loop CPU per Prisma query, the
 * 3-5 queries around each hash were CPU a login storm takes from the hashing threads (issue #3).
 *  - `credential`: the credential a login identifier names (find-credential.ts has the rule);
 *  - `secondFactors`: whether a confirmed TOTP and whether a passkey exists (twofactor/gate.ts);
 *  - `reserveAttempt` / `clearFailures`: the lockout counter (lockout.ts has the rule). The
 *    reservation is one conditional UPDATE, checked by its row count.
 */
import type { DbDriver } from "../../db/client.ts";
import { postgresSignInStore } from "./sign-in-store-postgres.ts";
import { sqliteSignInStore } from "./sign-in-store-sqlite.ts";

export interface SignInCredential {
  userId: string;
  passwordHash: string;
  /** The user's security stamp, read in the same statement as the hash. */
  securityStamp: string;
}

export interface AttemptWindow {
  now: Date;
  /** Failures before this start are forgotten. */
  windowStart: Date;
  maxFailedAttempts: number;
}

export interface SignInStore {
  /** By normalised user name, or (when `byEmail`) by normalised address. */
  credential(normalized: string, byEmail: boolean): Promise<SignInCredential | null>;
  secondFactors(userId: string): Promise<{ totp: boolean; passkey: boolean }>;
  /** True when an attempt slot was taken. */
  reserveAttempt(userId: string, window: AttemptWindow): Promise<boolean>;
  clearFailures(userId: string): Promise<void>;
}

export function signInStoreFor(driver: DbDriver): SignInStore {
  return driver.kind === "sqlite" ? sqliteSignInStore(driver) : postgresSignInStore(driver);
}
