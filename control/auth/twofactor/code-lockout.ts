/**
 * Wrong second-factor codes lock the account across challenges. A password success resets the
 * per-account failure counter (sign-in/lockout.ts), so without this an attacker holding the
 * password could sign in again and again, spending `MaxChallengeAttempts` code guesses on each
 * new challenge, and never be locked. Here the wrong answers of all the user's challenges created
 * within `LockoutWindow` are summed; reaching `MaxFailedAttempts` locks the account for
 * `LockoutDuration`, which refuses password sign-in (and so new challenges) meanwhile.
 */
import type { AuthContext } from "../context.ts";
import { metrics } from "../../metrics/index.ts";

export async function lockOnRepeatedWrongCodes(ctx: AuthContext, userId: string): Promise<void> {
  const ll = ctx.config.LocalLogin;
  if (!ll.LockoutEnabled) return;
  const now = ctx.now();
  const recent = await ctx.db.twoFactorChallenge.aggregate({
    where: { userId, createdAt: { gt: new Date(now.getTime() - ll.LockoutWindow) } },
    _sum: { attempts: true },
  });
  if ((recent._sum.attempts ?? 0) < ll.MaxFailedAttempts) return;
  const { count } = await ctx.db.passwordCredential.updateMany({
    where: { userId, OR: [{ lockedUntil: null }, { lockedUntil: { lte: now } }] },
    data: { lockedUntil: new Date(now.getTime() + ll.LockoutDuration), failedCount: ll.MaxFailedAttempts, failureWindowStart: now },
  });
  if (count === 1) {
    ctx.logger.warn({ userId, lockedForMs: ll.LockoutDuration }, "account locked after repeated wrong second-factor codes");
    metrics.lockout("second_factor");
  }
}
