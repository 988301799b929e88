/**
 * The claims' facts of a user as SQL columns and back, shared by the refresh lookup
 * (refresh-store-lookup.ts) and the session start (session-store-profile.ts): one select list,
 * one two-factor enrolment test (a confirmed TOTP or any passkey), one mapping to ClaimsProfile.
 * Identifiers are quoted, so the SQL serves both providers.
 */
import type { ClaimsProfile } from "./access-token.ts";

/** The columns `profileColumnsSql` selects, as a row returns them. */
export interface ProfileColumns {
  profileId: string | null;
  name: string | null;
  externalHandle: string | null;
  credentialUserId: string | null;
  userName: string | null;
  email: string | null;
  emailConfirmedAt: unknown;
  twoFactorEnrolled: unknown;
}

/**
 * The select list over `u` (User), `c` (PasswordCredential) and `e` (TotpEnrollment) joined on
 * `userId`, the user's id being `userIdSql`; `at(column)` wraps timestamp columns.
 */
export function profileColumnsSql(at: (column: string) => string, userIdSql: string): string {
  return `u."id" AS "profileId", u."name" AS "name", u."externalHandle" AS "externalHandle",
    c."userId" AS "credentialUserId", c."userName" AS "userName", c."email" AS "email", ${at('c."emailConfirmedAt"')} AS "emailConfirmedAt",
    (e."confirmedAt" IS NOT NULL OR EXISTS (SELECT 1 FROM "Passkey" p WHERE p."userId" = ${userIdSql})) AS "twoFactorEnrolled"`;
}

/** The row's profile, for the user `id` the caller found in it (`profileId` not null). */
export function profileFromColumns(row: ProfileColumns, id: string, date: (value: unknown) => Date): ClaimsProfile {
  return {
    id,
    name: row.name,
    externalHandle: row.externalHandle,
    credential:
      row.credentialUserId === null || row.userName === null
        ? null
        : {
            userName: row.userName,
            email: row.email,
            emailConfirmedAt: row.emailConfirmedAt === null || row.emailConfirmedAt === undefined ? null : date(row.emailConfirmedAt),
          },
    twoFactorEnrolled: Boolean(row.twoFactorEnrolled),
  };
}

/** SQLite's insert of a refresh token row: a session's first token and every successor. */
export const SQLITE_INSERT_REFRESH_TOKEN = `INSERT INTO "RefreshToken" ("id", "familyId", "tokenHash", "createdAt", "expiresAt") VALUES (?, ?, ?, ?, ?)`;
