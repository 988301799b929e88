/**
 * The claims' facts of one user (tokens/session-store.ts), by user id: the same columns and the
 * same two-factor enrolment test as the refresh lookup (refresh-store-lookup.ts), plus the
 * security stamp the new family records. Identifiers are quoted, so the SQL serves both providers.
 */
import type { NewFamily, StartedSession } from "./session-store.ts";

export interface ProfileRow {
  profileId: string;
  securityStamp: string;
  name: string | null;
  externalHandle: string | null;
  credentialUserId: string | null;
  userName: string | null;
  email: string | null;
  emailConfirmedAt: unknown;
  twoFactorEnrolled: unknown;
}

/** The profile query up to its one parameter (the user id), `at(column)` wrapping timestamps. */
export function profileSql(at: (column: string) => string, param: string): string {
  return `SELECT u."id" AS "profileId", u."securityStamp" AS "securityStamp", u."name" AS "name", u."externalHandle" AS "externalHandle",
    c."userId" AS "credentialUserId", c."userName" AS "userName", c."email" AS "email", ${at('c."emailConfirmedAt"')} AS "emailConfirmedAt",
    (e."confirmedAt" IS NOT NULL OR EXISTS (SELECT 1 FROM "Passkey" p WHERE p."userId" = u."id")) AS "twoFactorEnrolled"
  FROM "User" u
  LEFT JOIN "PasswordCredential" c ON c."userId" = u."id"
  LEFT JOIN "TotpEnrollment" e ON e."userId" = u."id"
  WHERE u."id" = ${param}`;
}

export function startedSession(f: NewFamily, row: ProfileRow, date: (value: unknown) => Date): StartedSession {
  return {
    family: {
      id: f.id,
      userId: f.userId,
      amr: f.amr,
      authTime: f.authTime,
      twoFactorSource: f.twoFactorSource,
      twoFactorAt: f.twoFactorAt,
      securityStamp: row.securityStamp,
    },
    profile: {
      id: row.profileId,
      name: row.name,
      externalHandle: row.externalHandle,
      credential:
        row.credentialUserId === null || row.userName === null
          ? null
          : { userName: row.userName, email: row.email, emailConfirmedAt: row.emailConfirmedAt === null || row.emailConfirmedAt === undefined ? null : date(row.emailConfirmedAt) },
      twoFactorEnrolled: Boolean(row.twoFactorEnrolled),
    },
  };
}

export const noSuchUser = (userId: string): Error => new Error(`cannot start a session: user ${userId} does not exist`);
