/**
 * The SQL of the sign-in store (sign-in-store.ts), the same on SQLite and PostgreSQL: identifiers
 * quoted, parameters named by `p(name)` (`@name` on SQLite, `$n` on PostgreSQL) and timestamps
 * wrapped by `at(param)`. `updatedAt` is the wall clock, as Prisma's `@updatedAt` writes it.
 */

type Param = (name: string) => string;

/**
 * The user's security stamp is read with the credential: the session (or challenge) this sign-in
 * ends in is created only while the stamp is still this one (issue #14 finding 3), so a sign-in
 * whose hash check began before a password change cannot outlive the change.
 */
export const CREDENTIAL_BY_USER_NAME = (p: Param): string =>
  `SELECT c."userId", c."passwordHash", u."securityStamp" FROM "PasswordCredential" c JOIN "User" u ON u."id" = c."userId"
    WHERE c."normalizedUserName" = ${p("key")}`;

/**
 * Several accounts may have typed one unproven address (Account rule 2): of the oldest 20, the
 * oldest that proved it, else the oldest.
 */
export const CREDENTIAL_BY_EMAIL = (p: Param): string => `SELECT oldest."userId", oldest."passwordHash", u."securityStamp" FROM (
    SELECT "userId", "passwordHash", "emailConfirmedAt", "createdAt" FROM "PasswordCredential"
    WHERE "normalizedEmail" = ${p("key")} ORDER BY "createdAt" ASC LIMIT 20
  ) oldest JOIN "User" u ON u."id" = oldest."userId" ORDER BY (oldest."emailConfirmedAt" IS NULL), oldest."createdAt" ASC LIMIT 1`;

export const SECOND_FACTORS = (p: Param): string => `SELECT
    EXISTS (SELECT 1 FROM "TotpEnrollment" WHERE "userId" = ${p("userId")} AND "confirmedAt" IS NOT NULL) AS "totp",
    EXISTS (SELECT 1 FROM "Passkey" WHERE "userId" = ${p("userId")}) AS "passkey"`;

/**
 * lockout.ts's reservation as one statement. A new window starts (count 1) when the account is
 * not locked and its last window is over or a lockout ran out; otherwise one more failure is
 * counted while under the budget and not locked. SET reads the row as it was before the update.
 */
export function RESERVE_ATTEMPT(p: Param, at: (param: string) => string): string {
  const now = at(p("now"));
  const fresh = `("failureWindowStart" IS NULL OR "failureWindowStart" < ${at(p("windowStart"))} OR "lockedUntil" IS NOT NULL)`;
  return `UPDATE "PasswordCredential" SET
      "failedCount" = CASE WHEN ${fresh} THEN 1 ELSE "failedCount" + 1 END,
      "failureWindowStart" = CASE WHEN ${fresh} THEN ${now} ELSE "failureWindowStart" END,
      "lockedUntil" = CASE WHEN ${fresh} THEN NULL ELSE "lockedUntil" END,
      "updatedAt" = ${at(p("updatedAt"))}
    WHERE "userId" = ${p("userId")} AND ("lockedUntil" IS NULL OR "lockedUntil" <= ${now})
      AND (${fresh} OR "failedCount" < ${p("max")})`;
}

export const CLEAR_FAILURES = (p: Param, at: (param: string) => string): string =>
  `UPDATE "PasswordCredential" SET "failedCount" = 0, "failureWindowStart" = NULL, "lockedUntil" = NULL, "updatedAt" = ${at(p("updatedAt"))}
    WHERE "userId" = ${p("userId")}`;
