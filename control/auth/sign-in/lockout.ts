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

/** Takes one attempt slot; false when the account is locked (or its budget is in flight). */
export async function reserveAttempt(ctx: AuthContext, userId: string): Promise<boolean> {
  const ll = ctx.config.LocalLogin;
  if (!ll.LockoutEnabled) return true;
  const now = ctx.now();
  const windowStart = new Date(now.getTime() - ll.LockoutWindow);
  const notLocked = { OR: [{ lockedUntil: null }, { lockedUntil: { lte: now } }] };
  // A new window: the last one is over, or a lockout has run out (which forgives its failures).
  const fresh = await ctx.db.passwordCredential.updateMany({
    where: {
      userId,
      AND: [notLocked, { OR: [{ failureWindowStart: null }, { failureWindowStart: { lt: windowStart } }, { lockedUntil: { not: null } }] }],
    },
    data: { failedCount: 1, failureWindowStart: now, lockedUntil: null },
  });
  if (fresh.count === 1) return true;
  const counted = await ctx.db.passwordCredential.updateMany({
    where: { userId, failedCount: { lt: ll.MaxFailedAttempts }, AND: [notLocked] },
    data: { failedCount: { increment: 1 } },
  });
  return counted.count === 1;
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
  if (count === 1) ctx.logger.warn({ userId, lockedForMs: ll.LockoutDuration }, "account locked after repeated failed sign-ins");
}

/** The reserved attempt succeeded: the counter starts over. */
export async function recordSuccess(ctx: AuthContext, userId: string): Promise<void> {
  if (!ctx.config.LocalLogin.LockoutEnabled) return;
  await ctx.db.passwordCredential.updateMany({ where: { userId }, data: { failedCount: 0, failureWindowStart: null, lockedUntil: null } });
}
