/**
 * The housekeeping sweep (login-service.md "Optional background sweep"): deletes rows whose life
 * is over, every `TokenCleanupInterval` (0 disables). Rotated refresh rows stay until their
 * family is past its absolute lifetime, so presenting an old token is still recognised as reuse
 * (and revokes the family) for as long as the family could have been used at all.
 */
import type { AuthContext } from "../context.ts";

export interface SweepCounts {
  families: number;
  refreshTokens: number;
  singleUseTokens: number;
  challenges: number;
  devices: number;
  webAuthnChallenges: number;
  mailCooldowns: number;
}

export async function sweepExpired(ctx: AuthContext): Promise<SweepCounts> {
  const now = ctx.now();
  const db = ctx.db;
  // Whole families past the absolute lifetime (their tokens go with them: cascade).
  const families = await db.refreshFamily.deleteMany({ where: { absoluteExpiresAt: { lt: now } } });
  // Live tokens past their sliding lifetime; rotated ones are kept for reuse detection.
  const refreshTokens = await db.refreshToken.deleteMany({ where: { rotatedAt: null, expiresAt: { lt: now } } });
  const singleUseTokens = await db.singleUseToken.deleteMany({ where: { expiresAt: { lt: now } } });
  const challenges = await db.twoFactorChallenge.deleteMany({ where: { expiresAt: { lt: now } } });
  const devices = await db.trustedDevice.deleteMany({ where: { expiresAt: { lt: now } } });
  const webAuthnChallenges = await db.webAuthnChallenge.deleteMany({ where: { expiresAt: { lt: now } } });
  const cooldown = ctx.config.LocalLogin.MailRequestCooldown;
  const mailCooldowns = await db.mailCooldown.deleteMany({ where: { lastAt: { lt: new Date(now.getTime() - cooldown) } } });
  return {
    families: families.count,
    refreshTokens: refreshTokens.count,
    singleUseTokens: singleUseTokens.count,
    challenges: challenges.count,
    devices: devices.count,
    webAuthnChallenges: webAuthnChallenges.count,
    mailCooldowns: mailCooldowns.count,
  };
}

/** Starts the periodic sweep; returns a stop function that waits for a sweep in progress. */
export function startSweep(ctx: AuthContext): () => Promise<void> {
  const interval = ctx.config.LocalLogin.TokenCleanupInterval;
  if (interval <= 0) return async () => {};
  let running: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    running = sweepExpired(ctx)
      .then((counts) => ctx.logger.info({ sweep: counts }, "expired auth rows deleted"))
      .catch((error: unknown) => ctx.logger.error({ err: error }, "auth cleanup sweep failed"));
  }, interval);
  // The sweep never keeps the process alive on its own.
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
