/**
 * A code offered as proof (sign-in challenge, step-up, regenerating recovery codes, turning
 * two-factor off): a TOTP code when it has the TOTP shape, otherwise a recovery code. Every
 * attempt goes through the account lockout of the password step (sign-in/lockout.ts): guessing
 * codes is guessing a credential, so wrong codes spend the same per-account budget as wrong
 * passwords, and racing guesses cannot outrun it (an attempt is reserved before it is checked).
 */
import type { AuthContext } from "../context.ts";
import { recordFailure, recordSuccess, releaseAttempt, reserveAttempt } from "../sign-in/lockout.ts";
import { acceptTotp } from "./enrolment.ts";
import { redeemRecoveryCode } from "./recovery-codes.ts";
import { looksLikeTotp } from "./totp.ts";
import type { Tx } from "./tx.ts";
import type { TwoFactorKeys } from "./secret-keys.ts";

export type CodeSource = "otp" | "recovery";

/** Checks and spends a code inside the caller's transaction; null when it is not accepted. */
export async function spendCode(tx: Tx, userId: string, code: string, now: Date, keys: TwoFactorKeys): Promise<CodeSource | null> {
  if (looksLikeTotp(code)) return (await acceptTotp(tx, userId, code, now, "confirmed", keys)) ? "otp" : null;
  return (await redeemRecoveryCode(tx, userId, code, now, keys)) ? "recovery" : null;
}

/**
 * What one guarded attempt produced: a value, a wrong proof (counts), or a refusal that is no
 * guess; `locked` when the account lockout refused it unchecked.
 */
export type Attempt<T> = { ok: true; value: T } | { ok: false; wrong: boolean; locked?: boolean };

/**
 * Runs one proof attempt under the account lockout. Accounts without a password credential (an
 * external login finishing a magic link) have no lockout row; the challenge attempt cap and the
 * rate limit still bound them.
 */
export async function guardedAttempt<T>(ctx: AuthContext, userId: string, attempt: () => Promise<Attempt<T>>): Promise<Attempt<T>> {
  const counted = (await ctx.db.passwordCredential.count({ where: { userId } })) === 1;
  if (counted && !(await reserveAttempt(ctx, userId))) {
    ctx.logger.info({ userId }, "second-factor attempt refused: account locked");
    return { ok: false, wrong: false, locked: true };
  }
  const result = await attempt();
  if (counted) {
    if (result.ok) await recordSuccess(ctx, userId);
    else if (result.wrong) await recordFailure(ctx, userId);
    else await releaseAttempt(ctx, userId);
  }
  return result;
}

