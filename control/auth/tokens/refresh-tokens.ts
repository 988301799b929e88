/**
 * Refresh-token families (sessions): creation at sign-in and rotation on every refresh.
 *
 * Rotation is one conditional update (`rotatedAt: null` → now, checked by row count) made atomic
 * with the family's touch and the successor's insert (tokens/refresh-store.ts, which also reads
 * the claims' facts in the same read), so of any number of concurrent refreshes of one token
 * exactly one rotates it. Every other presentation of that token is reuse of a rotated token
 * (login-service.md Sign-in rule 6): a thief and the rightful client cannot be told apart, so the
 * whole family is revoked, in its own statement so the revocation stays committed although the
 * request fails (conventions 6). A concurrent loser is such a presentation too. The one exception
 * is opt-in: within `RefreshTokenReuseInterval` of the rotation, a retry of the just-rotated token
 * gets the family's current live token again (tokens/successor.ts) instead of a revocation.
 */
import { randomUUID } from "node:crypto";
import type { AuthContext } from "../context.ts";
import type { ClientInfo } from "../sessions/client-info.ts";
import { revokeFamily } from "../sessions/revoke.ts";
import { readClaimsProfile, type ClaimsProfile, type SessionFacts } from "./access-token.ts";
import { hashToken, newOpaqueToken } from "./opaque.ts";
import type { RefreshStore, StoredRefresh } from "./refresh-store.ts";
import { successorToken } from "./successor.ts";

export interface NewSession {
  userId: string;
  amr: string[];
  authTime: Date;
  twoFactor?: { source: string; at: Date } | undefined;
  client: ClientInfo;
  /** Start only while the user's security stamp is this one (null: no condition). */
  expectedStamp?: string | null;
}

export interface SessionTokens {
  family: SessionFacts;
  refreshToken: string;
}

export type RefusalReason = "unknown" | "expired" | "family-revoked" | "family-expired" | "reuse";

export type RotationResult = ({ outcome: "rotated" | "retried"; profile: ClaimsProfile } & SessionTokens) | { outcome: "refused"; reason: RefusalReason };

const minDate = (a: Date, b: Date): Date => (a.getTime() <= b.getTime() ? a : b);

/** Starts a family and its first token; answers with the claims' facts read in the same unit. */
export async function createSession(ctx: AuthContext, input: NewSession): Promise<SessionTokens & { profile: ClaimsProfile }> {
  const now = ctx.now();
  const ll = ctx.config.LocalLogin;
  const refreshToken = newOpaqueToken();
  const absoluteExpiresAt = new Date(now.getTime() + ll.RefreshTokenAbsoluteLifetime);
  const { family, profile } = await ctx.sessions.start({
    id: randomUUID(),
    userId: input.userId,
    now,
    absoluteExpiresAt,
    amr: JSON.stringify(input.amr),
    authTime: input.authTime,
    twoFactorSource: input.twoFactor?.source ?? null,
    twoFactorAt: input.twoFactor?.at ?? null,
    userAgent: input.client.userAgent,
    ipAddress: input.client.ipAddress,
    expectedStamp: input.expectedStamp ?? null,
    firstToken: {
      id: randomUUID(),
      tokenHash: hashToken(refreshToken),
      expiresAt: minDate(new Date(now.getTime() + ll.RefreshTokenLifetime), absoluteExpiresAt),
    },
  });
  return { family, profile, refreshToken };
}

type Verdict = "rotate" | "rotated-before" | { refuse: RefusalReason };

/** What the stored state says about a presented token, before any write. */
function verdict({ token, family }: StoredRefresh, now: Date): Verdict {
  if (family.revokedAt !== null) return { refuse: "family-revoked" };
  // Absolute lifetime counts from the sign-in that started the chain; rotation never extends it.
  if (family.absoluteExpiresAt.getTime() <= now.getTime()) return { refuse: "family-expired" };
  if (token.rotatedAt !== null) return "rotated-before";
  if (token.expiresAt.getTime() <= now.getTime()) return { refuse: "expired" };
  return "rotate";
}

export async function rotateRefreshToken(ctx: AuthContext, store: RefreshStore, presented: string, client: ClientInfo): Promise<RotationResult> {
  const now = ctx.now();
  let successor = "";
  const result = await store.rotate(hashToken(presented), (found) => {
    if (verdict(found, now) !== "rotate") return null;
    successor = successorToken(ctx.config, presented);
    return {
      successorId: randomUUID(),
      successorHash: hashToken(successor),
      now,
      // Sliding lifetime, capped by the family's absolute expiry.
      successorExpiresAt: minDate(new Date(now.getTime() + ctx.config.LocalLogin.RefreshTokenLifetime), found.family.absoluteExpiresAt),
      client,
    };
  });
  if (!result) return { outcome: "refused", reason: "unknown" };
  const { found, outcome } = result;
  const v = verdict(found, now);
  if (typeof v === "object") return { outcome: "refused", reason: v.refuse };
  if (outcome === "rotated") return { outcome: "rotated", family: found.family, profile: found.profile, refreshToken: successor };
  // A logout or password change that revoked the family meanwhile wins over this refresh.
  if (outcome === "family-revoked") return { outcome: "refused", reason: "family-revoked" };
  return presentedRotated(ctx, found.token.id, presented, found.family, now);
}

/** The presented token was rotated before this request or by a concurrent one. */
async function presentedRotated(ctx: AuthContext, tokenId: string, presented: string, family: SessionFacts, now: Date): Promise<RotationResult> {
  const interval = ctx.config.LocalLogin.RefreshTokenReuseInterval;
  const current = await ctx.db.refreshToken.findUnique({ where: { id: tokenId }, select: { rotatedAt: true } });
  const rotatedAt = current?.rotatedAt;
  if (interval > 0 && rotatedAt && now.getTime() - rotatedAt.getTime() <= interval) {
    const successor = successorToken(ctx.config, presented);
    const live = await ctx.db.refreshToken.findUnique({ where: { tokenHash: hashToken(successor) }, include: { family: true } });
    if (live && live.rotatedAt === null && live.family.revokedAt === null && live.expiresAt.getTime() > now.getTime()) {
      return { outcome: "retried", family: live.family, profile: await readClaimsProfile(ctx, live.family), refreshToken: successor };
    }
  }
  const revoked = await revokeFamily(ctx, { familyId: family.id, reason: "refresh-token-reuse" });
  // Loud on purpose: this is the theft signal of Sign-in rule 6. Ids only, never the token.
  ctx.logger.warn({ familyId: family.id, userId: family.userId, alreadyRevoked: !revoked }, "refresh token reuse detected: session revoked");
  if (revoked) ctx.audit({ audit: "session-revoked", userId: family.userId, familyId: family.id, reason: "refresh-token-reuse" });
  return { outcome: "refused", reason: "reuse" };
}
