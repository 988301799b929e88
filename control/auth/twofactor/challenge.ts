/**
 * Sign-in challenges: what a password (or magic-link) sign-in of an enrolled user answers instead
 * of tokens. The challenge is an opaque 256-bit secret stored hashed; it lives for
 * `TwoFactor:ChallengeLifetime`, dies after `TwoFactor:MaxChallengeAttempts` wrong proofs (so one
 * password success does not buy unlimited code guesses), and is redeemed once.
 *
 * Redemption verifies the proof first (no transaction open), then consumes the row (conditional
 * update on `consumedAt: null`, checked by row count) and spends the proof in ONE transaction: of concurrent requests carrying correct codes exactly one
 * gets a session, and a wrong proof rolls the consumption back and then counts an attempt.
 */
import { randomUUID } from "node:crypto";
import type { Request } from "express";
import type { TwoFactorChallenge } from "../../../prisma/generated/sqlite/client.ts";
import type { AuthContext } from "../context.ts";
import { clientInfo } from "../sessions/client-info.ts";
import { hashToken, newOpaqueToken } from "../tokens/opaque.ts";
import { lockOnRepeatedWrongCodes } from "./code-lockout.ts";
import { guardedAttempt, type Attempt } from "./proof.ts";
import type { Tx } from "./tx.ts";
import { StampMoved } from "../tokens/session-store.ts";

export interface ChallengeBody {
  two_factor_required: true;
  challenge: string;
  expires_in: number;
}

/** `stamp`: the user's security stamp read with the first factor (see redeemChallenge). */
export async function createChallenge(ctx: AuthContext, input: { userId: string; amr: string[]; authTime: Date; req: Request; stamp: string }): Promise<ChallengeBody> {
  const now = ctx.now();
  const lifetime = ctx.config.TwoFactor.ChallengeLifetime;
  const token = newOpaqueToken();
  const client = clientInfo(input.req, ctx.config.LocalLogin.IpAddressStorage);
  await ctx.db.twoFactorChallenge.create({
    data: {
      id: randomUUID(),
      tokenHash: hashToken(token),
      userId: input.userId,
      amr: JSON.stringify(input.amr),
      authTime: input.authTime,
      createdAt: now,
      expiresAt: new Date(now.getTime() + lifetime),
      userAgent: client.userAgent,
      ipAddress: client.ipAddress,
      securityStamp: input.stamp,
    },
  });
  return { two_factor_required: true, challenge: token, expires_in: Math.floor(lifetime / 1000) };
}

/** The row of a challenge that can still be answered, or null. */
export async function findLiveChallenge(ctx: AuthContext, token: string): Promise<TwoFactorChallenge | null> {
  const row = await ctx.db.twoFactorChallenge.findUnique({ where: { tokenHash: hashToken(token) } });
  if (!row || row.consumedAt !== null) return null;
  if (row.expiresAt.getTime() <= ctx.now().getTime()) return null;
  if (row.attempts >= ctx.config.TwoFactor.MaxChallengeAttempts) return null;
  return row;
}

class WrongProof extends Error {}

/**
 * How a challenge is answered. `verify` does the work that is not the database's (a WebAuthn
 * signature check) BEFORE the transaction: nothing but database statements may run while a
 * transaction holds the connection (db/connection-lock.ts), so a slow or failing check can never
 * hold or roll back anyone else's writes. `spend` runs inside the consuming transaction and only
 * talks to the database (conditional updates that spend the proof).
 */
export interface ChallengeAnswer<V, P> {
  /** Null for a wrong proof. */
  verify(challenge: TwoFactorChallenge): Promise<V | null>;
  /** Null for a wrong (or meanwhile spent) proof; rolls the consumption back. */
  spend(tx: Tx, challenge: TwoFactorChallenge, now: Date, verified: V): Promise<P | null>;
}

/**
 * Answers a challenge: the proof is verified first, then one short transaction consumes the
 * challenge and spends the proof. Null overall when the challenge is unknown, used, expired, out
 * of attempts, the account is locked, or the proof is wrong.
 */
export async function redeemChallenge<V, P>(
  ctx: AuthContext,
  token: string,
  answer: ChallengeAnswer<V, P>,
): Promise<{ challenge: TwoFactorChallenge; proof: P } | null> {
  const challenge = await findLiveChallenge(ctx, token);
  if (!challenge) return null;
  const max = ctx.config.TwoFactor.MaxChallengeAttempts;
  const result = await guardedAttempt(ctx, challenge.userId, async (): Promise<Attempt<P>> => {
    try {
      const verified = await answer.verify(challenge);
      if (verified === null) throw new WrongProof();
      const now = ctx.now();
      const proof = await ctx.db.$transaction(async (tx) => {
        const consumed = await tx.twoFactorChallenge.updateMany({
          where: { id: challenge.id, consumedAt: null, expiresAt: { gt: now }, attempts: { lt: max } },
          data: { consumedAt: now },
        });
        if (consumed.count !== 1) return null;
        // A credential change since the first factor (password change, reset, admin set) kills
        // the challenge: the stamp read with the first factor must still be the user's. A row
        // from before stamps were recorded (null) is refused the same way. Rolled back: no
        // attempt is spent, the challenge simply cannot be redeemed any more.
        const current = await tx.user.count({ where: { id: challenge.userId, securityStamp: challenge.securityStamp ?? "" } });
        if (current !== 1) throw new StampMoved(challenge.userId);
        const value = await answer.spend(tx, challenge, now, verified);
        if (value === null) throw new WrongProof();
        return value;
      });
      return proof === null ? { ok: false, wrong: false } : { ok: true, value: proof };
    } catch (error) {
      if (error instanceof StampMoved) {
        ctx.logger.info({ userId: challenge.userId }, "challenge refused: the credentials changed since it was opened");
        return { ok: false, wrong: false };
      }
      if (!(error instanceof WrongProof)) throw error;
      await ctx.db.twoFactorChallenge.updateMany({ where: { id: challenge.id, consumedAt: null }, data: { attempts: { increment: 1 } } });
      await lockOnRepeatedWrongCodes(ctx, challenge.userId);
      return { ok: false, wrong: true };
    }
  });
  return result.ok ? { challenge, proof: result.value } : null;
}
