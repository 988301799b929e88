/**
 * The TOTP enrolment of a user: pending (secret issued, not yet proven) until a correct code
 * confirms it. Every code acceptance is one conditional update `lastStep < step`, checked by row
 * count: a code (its time step) is accepted once, so a code read over someone's shoulder or
 * replayed from a log of requests is refused, also when two requests race with the same code.
 */
import type { AuthContext } from "../context.ts";
import { isUniqueViolation } from "../../db/client.ts";
import { fail } from "../../http/errors.ts";
import { matchTotpStep, newTotpSecret, otpauthUri } from "./totp.ts";
import type { Tx } from "./tx.ts";
import { twoFactorKeys, type TwoFactorKeys } from "./secret-keys.ts";

export async function hasConfirmedTotp(db: Pick<Tx, "totpEnrollment">, userId: string): Promise<boolean> {
  const row = await db.totpEnrollment.findUnique({ where: { userId }, select: { confirmedAt: true } });
  return row?.confirmedAt != null;
}

/** Issues a new pending secret, replacing an earlier pending one; a confirmed enrolment is 409. */
export async function startEnrolment(ctx: AuthContext, userId: string): Promise<{ secret: string; otpauthUri: string }> {
  const secret = newTotpSecret();
  // Sealed at rest under TwoFactor:SecretKey (secret-keys.ts); the caller gets it in the clear once.
  const stored = twoFactorKeys(ctx.config).seal(userId, secret);
  const now = ctx.now();
  const replaced = await ctx.db.totpEnrollment.updateMany({ where: { userId, confirmedAt: null }, data: { secret: stored, lastStep: 0, createdAt: now } });
  if (replaced.count === 0) {
    try {
      await ctx.db.totpEnrollment.create({ data: { userId, secret: stored, createdAt: now } });
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      // The row exists and was not pending: two-factor is already on (or a racing enrol won).
      throw fail.conflict("Two-factor authentication is already on. Turn it off before enrolling again.");
    }
  }
  return { secret, otpauthUri: otpauthUri(secret, ctx.config.TwoFactor.Issuer, await accountLabel(ctx, userId)) };
}

/** What authenticator apps show next to the issuer: the user name, else the address, else the id. */
async function accountLabel(ctx: AuthContext, userId: string): Promise<string> {
  const user = await ctx.db.user.findUnique({ where: { id: userId }, include: { credential: true } });
  return user?.credential?.userName ?? user?.externalHandle ?? user?.email ?? userId;
}

/**
 * Accepts a TOTP code against the user's enrolment (`state` "confirmed" for sign-in proofs,
 * "pending" for the confirmation itself) and records its step; false when the code is wrong or its
 * step was already used.
 */
export async function acceptTotp(tx: Pick<Tx, "totpEnrollment">, userId: string, code: string, now: Date, state: "confirmed" | "pending", keys: TwoFactorKeys): Promise<boolean> {
  const enrolment = await tx.totpEnrollment.findUnique({ where: { userId } });
  if (!enrolment || (enrolment.confirmedAt === null) !== (state === "pending")) return false;
  const secret = keys.open(userId, enrolment.secret);
  if (secret === null) return false;
  const step = matchTotpStep(secret, code, now);
  if (step === null) return false;
  const { count } = await tx.totpEnrollment.updateMany({
    // `secret` too: a re-enrolment racing this check must not be confirmed by the old secret's code.
    where: { userId, secret: enrolment.secret, lastStep: { lt: step }, confirmedAt: state === "pending" ? null : { not: null } },
    data: { lastStep: step, ...(state === "pending" ? { confirmedAt: now } : {}) },
  });
  return count === 1;
}
