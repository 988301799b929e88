/**
 * Per-account lockout (login-service.md Limits: MaxFailedAttempts within LockoutWindow locks for
 * LockoutDuration). A password guess must *reserve* an attempt before the hash is checked: the
 * reservation is a conditional increment of `failedCount`, so 50 concurrent guesses get exactly
 * MaxFailedAttempts verifications and the rest are refused unverified. Read-then-write would let
 * every racer see "4 failures so far" and test its guess (a lockout bypass by parallelism).
 * A success clears the counter; a failure keeps its reservation, and the one that fills the
 * budget sets `lockedUntil`.
 */
import type { AuthContext } from "../context.ts";
import { metrics } from "../../metrics/index.ts";

/**
 * Takes one attempt slot; false when the account is locked (or its budget is in flight). One
 * conditional update (sign-in/sign-in-store-sql.ts): a new window when the account is not locked
 * and the last window is over or a lockout has run out (which forgives its failures); otherwise
 * one more failure while under the budget.
 */
export async function reserveAttempt(ctx: AuthContext, userId: string): Promise<boolean> {
  const ll = ctx.config.LocalLogin;
  if (!ll.LockoutEnabled) return true;
  const now = ctx.now();
  return ctx.signIn.reserveAttempt(userId, { now, windowStart: new Date(now.getTime() - ll.LockoutWindow), maxFailedAttempts: ll.MaxFailedAttempts });
}

/** The reserved attempt failed: lock once the budget is spent. */
export async function recordFailure(ctx: AuthContext, userId: string): Promise<void> {
  const ll = ctx.config.LocalLogin;
  if (!ll.LockoutEnabled) return;
  const now = ctx.now();
  const { count } = await ctx.db.passwordCredential.updateMany({
    where: { userId, failedCount: { gte: ll.MaxFailedAttempts }, lockedUntil: null },
    data: { lockedUntil: new Date(now.getTime() + ll.LockoutDuration) },
  });
  if (count === 1) {
    ctx.logger.warn({ userId, lockedForMs: ll.LockoutDuration }, "account locked after repeated failed sign-ins");
    metrics.lockout("password");
  }
}

/** The reserved attempt succeeded: the counter starts over. */
export async function recordSuccess(ctx: AuthContext, userId: string): Promise<void> {
  if (!ctx.config.LocalLogin.LockoutEnabled) return;
  await ctx.signIn.clearFailures(userId);
}
