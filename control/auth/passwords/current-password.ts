/**
 * A current password offered as proof by a signed-in caller (`/auth/password`, `/auth/email`, and
 * the proof before a second factor changes). It is a password guess like any sign-in: the attempt
 * is reserved under the account lockout before the hash is checked (sign-in/lockout.ts), so a
 * stolen access token cannot be used to guess the password without limit on these endpoints.
 */
import type { AuthContext } from "../context.ts";
import { recordFailure, recordSuccess, reserveAttempt } from "../sign-in/lockout.ts";

export type CurrentPasswordCheck = { outcome: "ok"; passwordHash: string } | { outcome: "wrong" | "locked" | "no-password" };

export const WRONG_CURRENT_PASSWORD = "The current password is not correct.";
export const LOCKED_CURRENT_PASSWORD = "Too many wrong passwords. Try again later.";

export async function checkCurrentPassword(ctx: AuthContext, userId: string, password: string): Promise<CurrentPasswordCheck> {
  const credential = await ctx.db.passwordCredential.findUnique({ where: { userId }, select: { passwordHash: true } });
  if (!credential) return { outcome: "no-password" };
  if (!(await reserveAttempt(ctx, userId))) {
    // Same work as a counted guess, so timing does not tell "locked" apart.
    await ctx.hasher.verify(password, credential.passwordHash);
    return { outcome: "locked" };
  }
  const { ok } = await ctx.hasher.verify(password, credential.passwordHash);
  if (!ok) {
    await recordFailure(ctx, userId);
    return { outcome: "wrong" };
  }
  await recordSuccess(ctx, userId);
  return { outcome: "ok", passwordHash: credential.passwordHash };
}
