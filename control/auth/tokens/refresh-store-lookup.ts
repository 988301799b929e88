/**
 * The one read of a refresh (tokens/refresh-store.ts), shared by both providers: token, family and
 * the claims' facts, by token hash. Identifiers are quoted, so the SQL is the same on SQLite and
 * PostgreSQL except for how a timestamp column is read (`at`).
 */
import { profileColumnsSql, profileFromColumns, type ProfileColumns } from "./profile-columns.ts";
import type { StoredRefresh } from "./refresh-store.ts";

/**
 * One row of the lookup query. Both providers alias their columns to these names; dates arrive as
 * whatever the driver returns and go through the provider's `date`.
 */
export interface LookupRow extends ProfileColumns {
  tokenId: string;
  expiresAt: unknown;
  rotatedAt: unknown;
  familyId: string;
  userId: string;
  amr: string;
  authTime: unknown;
  twoFactorSource: string | null;
  twoFactorAt: unknown;
  securityStamp: string;
  revokedAt: unknown;
  absoluteExpiresAt: unknown;
}

export function storedRefresh(row: LookupRow, date: (value: unknown) => Date): StoredRefresh {
  const maybeDate = (value: unknown): Date | null => (value === null || value === undefined ? null : date(value));
  if (row.profileId === null) throw new Error(`user ${row.userId} of session ${row.familyId} no longer exists`);
  return {
    token: { id: row.tokenId, expiresAt: date(row.expiresAt), rotatedAt: maybeDate(row.rotatedAt) },
    family: {
      id: row.familyId,
      userId: row.userId,
      amr: row.amr,
      authTime: date(row.authTime),
      twoFactorSource: row.twoFactorSource,
      twoFactorAt: maybeDate(row.twoFactorAt),
      securityStamp: row.securityStamp,
      revokedAt: maybeDate(row.revokedAt),
      absoluteExpiresAt: date(row.absoluteExpiresAt),
    },
    profile: profileFromColumns(row, row.profileId, date),
  };
}

/** The lookup's select list and joins, the same on both providers (identifiers quoted). */
const LOOKUP_FROM = `FROM "RefreshToken" t
  JOIN "RefreshFamily" f ON f."id" = t."familyId"
  LEFT JOIN "User" u ON u."id" = f."userId"
  LEFT JOIN "PasswordCredential" c ON c."userId" = f."userId"
  LEFT JOIN "TotpEnrollment" e ON e."userId" = f."userId"
  WHERE t."tokenHash" = `;

/** The lookup query up to its one parameter, `at(column)` wrapping each timestamp column. */
export function lookupSql(at: (column: string) => string, param: string): string {
  return `SELECT t."id" AS "tokenId", ${at('t."expiresAt"')} AS "expiresAt", ${at('t."rotatedAt"')} AS "rotatedAt",
    f."id" AS "familyId", f."userId" AS "userId", f."amr" AS "amr", ${at('f."authTime"')} AS "authTime",
    f."twoFactorSource" AS "twoFactorSource", ${at('f."twoFactorAt"')} AS "twoFactorAt", f."securityStamp" AS "securityStamp",
    ${at('f."revokedAt"')} AS "revokedAt", ${at('f."absoluteExpiresAt"')} AS "absoluteExpiresAt",
    ${profileColumnsSql(at, 'f."userId"')}
  ${LOOKUP_FROM}${param}`;
}
