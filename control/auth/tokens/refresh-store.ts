/**
 * The storage side of a refresh (the hot path of issue #3), one implementation per provider on
 * the driver under Prisma: Prisma costs ~1.2 ms per query here and a refresh took ~10 of them.
 * `rotate` does everything in one read and one atomic write:
 *  - the read returns the token, its family and every fact the access token's claims are built
 *    from (user, credential, two-factor enrolment), so claims are still re-read on every refresh;
 *  - the write rotates the token only while it is unrotated and its family live (both checked
 *    by the statement itself, never by an earlier read), touches the family and inserts the
 *    successor, all or nothing.
 * The policy (lifetimes, reuse, revocation) stays in refresh-tokens.ts, identical for both.
 */
import type { DbDriver } from "../../db/client.ts";
import type { ClientInfo } from "../sessions/client-info.ts";
import type { ClaimsProfile, SessionFacts } from "./access-token.ts";
import { postgresRefreshStore } from "./refresh-store-postgres.ts";
import { sqliteRefreshStore } from "./refresh-store-sqlite.ts";

export interface StoredFamily extends SessionFacts {
  revokedAt: Date | null;
  absoluteExpiresAt: Date;
}

export interface StoredRefresh {
  token: { id: string; expiresAt: Date; rotatedAt: Date | null };
  family: StoredFamily;
  profile: ClaimsProfile;
}

export interface Rotation {
  successorId: string;
  successorHash: string;
  now: Date;
  successorExpiresAt: Date;
  client: ClientInfo;
}

/**
 * `lost`: the token was rotated by someone else first. `family-revoked`: the family was revoked
 * before the write; nothing was written. `skipped`: the plan asked for no rotation.
 */
export type RotationOutcome = "rotated" | "lost" | "family-revoked" | "skipped";

export interface RefreshStore {
  /** Null when no token has this hash; `plan` sees what was found and decides whether to rotate. */
  rotate(tokenHash: string, plan: (found: StoredRefresh) => Rotation | null): Promise<{ found: StoredRefresh; outcome: RotationOutcome } | null>;
}

export function refreshStoreFor(driver: DbDriver): RefreshStore {
  return driver.kind === "sqlite" ? sqliteRefreshStore(driver) : postgresRefreshStore(driver);
}
