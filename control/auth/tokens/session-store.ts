/**
 * The storage side of starting a session (every sign-in's last step, sign-in/complete.ts), on the
 * driver under Prisma like the refresh store (tokens/refresh-store.ts): Prisma costs ~1.2 ms of
 * event-loop CPU per query and this step took ~6 of them (transaction, user read, two inserts,
 * claims read), CPU that a login storm takes from the hashing threads.
 *
 * `start` is one atomic unit: the family copies the user's security stamp in the same unit that
 * inserts it and its first refresh token, and the claims' facts (user, credential, two-factor
 * enrolment) are read in that unit too, so they are as current as a read after the commit.
 */
import type { DbDriver } from "../../db/client.ts";
import type { ClaimsProfile, SessionFacts } from "./access-token.ts";
import { postgresSessionStore } from "./session-store-postgres.ts";
import { sqliteSessionStore } from "./session-store-sqlite.ts";

export interface NewFamily {
  id: string;
  userId: string;
  now: Date;
  absoluteExpiresAt: Date;
  /** JSON array of RFC 8176 values, as stored. */
  amr: string;
  authTime: Date;
  twoFactorSource: string | null;
  twoFactorAt: Date | null;
  userAgent: string | null;
  ipAddress: string | null;
  /** Insert only while the user's stamp equals this (null: unconditional); else StampMoved. */
  expectedStamp: string | null;
  firstToken: { id: string; tokenHash: string; expiresAt: Date };
}

/** The user's security stamp moved since the first factor was checked: nothing was written. */
export class StampMoved extends Error {
  override readonly name = "StampMoved";
  constructor(readonly userId: string) {
    super(`the security stamp of user ${userId} moved during sign-in`);
  }
}

export interface StartedSession {
  family: SessionFacts;
  profile: ClaimsProfile;
}

export interface SessionStore {
  /** Throws when the user no longer exists, StampMoved when its stamp moved (nothing is written). */
  start(family: NewFamily): Promise<StartedSession>;
}

export function sessionStoreFor(driver: DbDriver): SessionStore {
  return driver.kind === "sqlite" ? sqliteSessionStore(driver) : postgresSessionStore(driver);
}
