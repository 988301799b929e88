/**
 * Refresh-token families (sessions): creation at sign-in and rotation on every refresh.
 *
 * Rotation is one conditional update (`rotatedAt: null` → now, checked by row count) inside a
 * transaction with the successor's insert, so of any number of concurrent refreshes of one token
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
import type { SessionFacts } from "./access-token.ts";
import { hashToken, newOpaqueToken } from "./opaque.ts";
import { successorToken } from "./successor.ts";

export interface NewSession {
  userId: string;
  amr: string[];
  authTime: Date;
  twoFactor?: { source: string; at: Date } | undefined;
  client: ClientInfo;
}

export interface SessionTokens {
  family: SessionFacts;
  refreshToken: string;
}

export type RefusalReason = "unknown" | "expired" | "family-revoked" | "family-expired" | "reuse";

export type RotationResult = ({ outcome: "rotated" | "retried" } & SessionTokens) | { outcome: "refused"; reason: RefusalReason };

const minDate = (a: Date, b: Date): Date => (a.getTime() <= b.getTime() ? a : b);

export async function createSession(ctx: AuthContext, input: NewSession): Promise<SessionTokens> {
  const now = ctx.now();
  const ll = ctx.config.LocalLogin;
  const refreshToken = newOpaqueToken();
  const absoluteExpiresAt = new Date(now.getTime() + ll.RefreshTokenAbsoluteLifetime);
  const family = await ctx.db.$transaction(async (tx) => {
    const user = await tx.user.findUniqueOrThrow({ where: { id: input.userId }, select: { securityStamp: true } });
    const created = await tx.refreshFamily.create({
      data: {
        id: randomUUID(),
        userId: input.userId,
        createdAt: now,
        lastUsedAt: now,
        absoluteExpiresAt,
        amr: JSON.stringify(input.amr),
        authTime: input.authTime,
        twoFactorSource: input.twoFactor?.source ?? null,
        twoFactorAt: input.twoFactor?.at ?? null,
        securityStamp: user.securityStamp,
        userAgent: input.client.userAgent,
        ipAddress: input.client.ipAddress,
      },
    });
    await tx.refreshToken.create({
      data: {
        id: randomUUID(),
        familyId: created.id,
        tokenHash: hashToken(refreshToken),
        createdAt: now,
        expiresAt: minDate(new Date(now.getTime() + ll.RefreshTokenLifetime), absoluteExpiresAt),
      },
    });
    return created;
  });
  return { family, refreshToken };
}

class FamilyRevokedMeanwhile extends Error {}

export async function rotateRefreshToken(ctx: AuthContext, presented: string, client: ClientInfo): Promise<RotationResult> {
  const now = ctx.now();
  const row = await ctx.db.refreshToken.findUnique({ where: { tokenHash: hashToken(presented) }, include: { family: true } });
  if (!row) return { outcome: "refused", reason: "unknown" };
  const { family } = row;
  if (family.revokedAt !== null) return { outcome: "refused", reason: "family-revoked" };
  // Absolute lifetime counts from the sign-in that started the chain; rotation never extends it.
  if (family.absoluteExpiresAt.getTime() <= now.getTime()) return { outcome: "refused", reason: "family-expired" };

  if (row.rotatedAt === null) {
    if (row.expiresAt.getTime() <= now.getTime()) return { outcome: "refused", reason: "expired" };
    const successor = successorToken(ctx.config, presented);
    const successorId = randomUUID();
    try {
      const won = await ctx.db.$transaction(async (tx) => {
        const rotated = await tx.refreshToken.updateMany({ where: { id: row.id, rotatedAt: null }, data: { rotatedAt: now, replacedBy: successorId } });
        if (rotated.count !== 1) return false;
        // A logout or password change that revoked the family meanwhile wins over this refresh.
        const touched = await tx.refreshFamily.updateMany({
          where: { id: family.id, revokedAt: null },
          data: { lastUsedAt: now, userAgent: client.userAgent, ipAddress: client.ipAddress },
        });
        if (touched.count !== 1) throw new FamilyRevokedMeanwhile();
        await tx.refreshToken.create({
          data: {
            id: successorId,
            familyId: family.id,
            tokenHash: hashToken(successor),
            createdAt: now,
            // Sliding lifetime, capped by the family's absolute expiry.
            expiresAt: minDate(new Date(now.getTime() + ctx.config.LocalLogin.RefreshTokenLifetime), family.absoluteExpiresAt),
          },
        });
        return true;
      });
      if (won) return { outcome: "rotated", family, refreshToken: successor };
    } catch (error) {
      if (error instanceof FamilyRevokedMeanwhile) return { outcome: "refused", reason: "family-revoked" };
      throw error;
    }
  }
  return presentedRotated(ctx, row.id, presented, family, now);
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
      return { outcome: "retried", family: live.family, refreshToken: successor };
    }
  }
  const revoked = await revokeFamily(ctx, { familyId: family.id, reason: "refresh-token-reuse" });
  // Loud on purpose: this is the theft signal of Sign-in rule 6. Ids only, never the token.
  ctx.logger.warn({ familyId: family.id, userId: family.userId, alreadyRevoked: !revoked }, "refresh token reuse detected: session revoked");
  if (revoked) ctx.audit({ audit: "session-revoked", userId: family.userId, familyId: family.id, reason: "refresh-token-reuse" });
  return { outcome: "refused", reason: "reuse" };
}
