/**
 * Signed-in management of two-factor authentication: confirming an enrolment, regenerating
 * recovery codes and turning two-factor off. Each takes a live code as proof (a stolen access
 * token alone cannot change the second factor) and spends it in the transaction that makes the
 * change, under the account lockout (proof.ts).
 */
import type { AuthContext } from "../context.ts";
import { fail } from "../../http/errors.ts";
import { acceptTotp } from "./enrolment.ts";
import { guardedAttempt, spendCode, type Attempt } from "./proof.ts";
import { replaceRecoveryCodes } from "./recovery-codes.ts";
import { tooManyWrongCodes, wrongCode } from "./step-up.ts";
import type { Tx } from "./tx.ts";
import { twoFactorKeys } from "./secret-keys.ts";

class WrongCode extends Error {}

/** Runs `change` after `check` accepted the code, in one transaction; 400 for a wrong code. */
async function withCode<T>(ctx: AuthContext, userId: string, check: (tx: Tx, now: Date) => Promise<boolean>, change: (tx: Tx, now: Date) => Promise<T>): Promise<T> {
  const result = await guardedAttempt(ctx, userId, async (): Promise<Attempt<T>> => {
    const now = ctx.now();
    try {
      const value = await ctx.db.$transaction(async (tx) => {
        if (!(await check(tx, now))) throw new WrongCode();
        return change(tx, now);
      });
      return { ok: true, value };
    } catch (error) {
      if (error instanceof WrongCode) return { ok: false, wrong: true };
      throw error;
    }
  });
  if (result.ok) return result.value;
  if (result.wrong) throw wrongCode();
  throw tooManyWrongCodes(ctx);
}

/** The first correct code turns a pending enrolment on and issues ten recovery codes. */
export async function confirmEnrolment(ctx: AuthContext, userId: string, code: string): Promise<string[]> {
  const pending = await ctx.db.totpEnrollment.findUnique({ where: { userId }, select: { confirmedAt: true } });
  if (!pending) throw fail.badRequest("Start the enrolment first.");
  if (pending.confirmedAt !== null) throw fail.conflict("Two-factor authentication is already on.");
  return withCode(
    ctx,
    userId,
    (tx, now) => acceptTotp(tx, userId, code, now, "pending", twoFactorKeys(ctx.config)),
    (tx, now) => replaceRecoveryCodes(tx, userId, now, twoFactorKeys(ctx.config)),
  );
}

async function requireEnrolled(ctx: AuthContext, userId: string): Promise<void> {
  const row = await ctx.db.totpEnrollment.findUnique({ where: { userId }, select: { confirmedAt: true } });
  if (!row?.confirmedAt) throw fail.badRequest("Two-factor authentication is not on.");
}

export async function regenerateRecoveryCodes(ctx: AuthContext, userId: string, code: string): Promise<string[]> {
  await requireEnrolled(ctx, userId);
  return withCode(
    ctx,
    userId,
    async (tx, now) => (await spendCode(tx, userId, code, now, twoFactorKeys(ctx.config))) !== null,
    (tx, now) => replaceRecoveryCodes(tx, userId, now, twoFactorKeys(ctx.config)),
  );
}

/**
 * Turns two-factor off: the enrolment and recovery codes go, and every trusted device is
 * un-trusted (a cached second factor must not outlive the factor it caches).
 */
export async function disableTwoFactor(ctx: AuthContext, userId: string, code: string): Promise<void> {
  await requireEnrolled(ctx, userId);
  await withCode(
    ctx,
    userId,
    async (tx, now) => (await spendCode(tx, userId, code, now, twoFactorKeys(ctx.config))) !== null,
    async (tx, now) => {
      await tx.totpEnrollment.deleteMany({ where: { userId } });
      await tx.recoveryCode.deleteMany({ where: { userId } });
      await tx.trustedDevice.updateMany({ where: { userId, revokedAt: null }, data: { revokedAt: now, revokeReason: "two-factor-disabled" } });
    },
  );
  ctx.logger.info({ userId }, "two-factor authentication turned off; trusted devices revoked");
}
