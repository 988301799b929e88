/**
 * Per-account lockout (login-service.md Limits: MaxFailedAttempts within LockoutWindow locks for
 * LockoutDuration). A password guess must *reserve* an attempt before the hash is checked: the
 * reservation is a conditional increment of `failedCount`, so 50 concurrent guesses get exactly
 * MaxFailedAttempts verifications and the rest are refused unverified. Read-then-write would let
 * every racer see "4 failures so far" and test its guess (a lockout bypass by parallelism).
 * A success clears the counter; a failure keeps its reservation, and the one that fills the
 * budget sets `lockedUntil`.
 *
 * A full budget is not a lock, though: it may be checks still in flight, correct ones included
 * (several clients of one account signing in at once, a password change while apps sign in).
 * Refusing then turned correct passwords away as "locked" (audit F2). So a reservation refused
 * while the account is not locked waits for an in-flight check to settle and tries again, for at
 * most IN_FLIGHT_WAIT_MS: a success frees the budget, wrong guesses lock the account. Nothing is
 * checked without a reservation, so parallel wrong guesses still get at most the budget checked.
 */
import type { AuthContext } from "../context.ts";
import { metrics } from "../../metrics/index.ts";
import { announceSettled, settleWait } from "./attempt-settled.ts";

/**
 * How long a check waits for the checks in flight before it is refused. A check settles within
 * one hash (~100 ms at the default PBKDF2 cost), so this covers rounds of a sign-in storm; what
 * it bounds is a reservation whose request died before recording (it holds the budget until the
 * window ends, as before).
 */
export const IN_FLIGHT_WAIT_MS = 5_000;

/** Re-checks this often even without a wakeup: attempts settle in other processes too (cluster). */
const IN_FLIGHT_POLL_MS = 100;

/**
 * Takes one attempt slot; false when the account is locked (or its budget stayed in flight for
 * IN_FLIGHT_WAIT_MS). One conditional update (sign-in/sign-in-store-sql.ts): a new window when
 * the account is not locked and the last window is over or a lockout has run out (which forgives
 * its failures); otherwise one more failure while under the budget.
 */
export async function reserveAttempt(ctx: AuthContext, userId: string): Promise<boolean> {
  if (!ctx.config.LocalLogin.LockoutEnabled) return true;
  const deadline = Date.now() + IN_FLIGHT_WAIT_MS;
  for (;;) {
    const settled = settleWait(userId);
    try {
      if (await tryReserve(ctx, userId)) return true;
      if (await isLocked(ctx, userId)) return false;
      const left = deadline - Date.now();
      if (left <= 0) {
        ctx.logger.info({ userId }, "attempt refused: the account's lockout budget stayed in flight");
        return false;
      }
      await settled.wait(Math.min(IN_FLIGHT_POLL_MS, left));
    } finally {
      settled.cancel();
    }
  }
}

function tryReserve(ctx: AuthContext, userId: string): Promise<boolean> {
  const ll = ctx.config.LocalLogin;
  const now = ctx.now();
  return ctx.signIn.reserveAttempt(userId, { now, windowStart: new Date(now.getTime() - ll.LockoutWindow), maxFailedAttempts: ll.MaxFailedAttempts });
}

/** Locked, or no credential to reserve on: nothing to wait for. */
async function isLocked(ctx: AuthContext, userId: string): Promise<boolean> {
  const row = await ctx.db.passwordCredential.findUnique({ where: { userId }, select: { lockedUntil: true } });
  return row === null || (row.lockedUntil !== null && row.lockedUntil > ctx.now());
}

/** The reserved attempt failed: lock once the budget is spent. */
export async function recordFailure(ctx: AuthContext, userId: string): Promise<void> {
  const ll = ctx.config.LocalLogin;
  if (!ll.LockoutEnabled) return;
  const now = ctx.now();
  const { count } = await ctx.db.passwordCredential
    .updateMany({
      where: { userId, failedCount: { gte: ll.MaxFailedAttempts }, lockedUntil: null },
      data: { lockedUntil: new Date(now.getTime() + ll.LockoutDuration) },
    })
    .finally(() => announceSettled(userId));
  if (count === 1) {
    ctx.logger.warn({ userId, lockedForMs: ll.LockoutDuration }, "account locked after repeated failed sign-ins");
    metrics.lockout("password");
  }
}

/** The reserved attempt succeeded: the counter starts over. */
export async function recordSuccess(ctx: AuthContext, userId: string): Promise<void> {
  if (!ctx.config.LocalLogin.LockoutEnabled) return;
  await ctx.signIn.clearFailures(userId).finally(() => announceSettled(userId));
}

/**
 * A refusal that was no guess (a challenge already used by a racing request) gives its reserved
 * slot back, so the winner's racing duplicates do not lock the account.
 */
export async function releaseAttempt(ctx: AuthContext, userId: string): Promise<void> {
  if (!ctx.config.LocalLogin.LockoutEnabled) return;
  await ctx.db.passwordCredential
    .updateMany({ where: { userId, failedCount: { gt: 0 }, lockedUntil: null }, data: { failedCount: { decrement: 1 } } })
    .finally(() => announceSettled(userId));
}
