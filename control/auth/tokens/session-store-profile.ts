/**
 * The claims' facts of one user (tokens/session-store.ts), by user id: the same columns and the
 * same two-factor enrolment test as the refresh lookup (refresh-store-lookup.ts), plus the
 * security stamp the new family records. Identifiers are quoted, so the SQL serves both providers.
 */
import { profileColumnsSql, profileFromColumns, type ProfileColumns } from "./profile-columns.ts";
import type { NewFamily, StartedSession } from "./session-store.ts";

export interface ProfileRow extends ProfileColumns {
  profileId: string;
  securityStamp: string;
}

/** The profile query up to its one parameter (the user id), `at(column)` wrapping timestamps. */
export function profileSql(at: (column: string) => string, param: string): string {
  return `SELECT u."securityStamp" AS "securityStamp", ${profileColumnsSql(at, 'u."id"')}
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
    profile: profileFromColumns(row, row.profileId, date),
  };
}

export const noSuchUser = (userId: string): Error => new Error(`cannot start a session: user ${userId} does not exist`);
