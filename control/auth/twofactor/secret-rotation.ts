/**
 * At startup, every TOTP secret not sealed under the current `TwoFactor:SecretKey` is sealed under
 * it: rows written before encryption existed and rows under a retired key (issue #14 finding 6).
 * Each row is rewritten by a conditional update on the value read, so a concurrent change of the
 * row is never overwritten. A row that cannot be opened (its key version is not configured) is
 * left alone and reported: it stays unusable until that key is configured again.
 */
import type { AuthContext } from "../context.ts";
import { twoFactorKeys } from "./secret-keys.ts";

/** Rows per batch: bounded memory however many users there are. */
const BATCH = 500;

export async function resealTotpSecrets(ctx: Pick<AuthContext, "db" | "config" | "logger">): Promise<{ resealed: number; unreadable: number }> {
  const keys = twoFactorKeys(ctx.config);
  if (!keys.sealing) {
    ctx.logger.warn("TwoFactor:SecretKey is not set: TOTP secrets are stored unencrypted; set it to base64 of 32 random bytes (openssl rand -base64 32)");
    return { resealed: 0, unreadable: 0 };
  }
  let resealed = 0;
  let unreadable = 0;
  let after = "";
  for (;;) {
    const rows = await ctx.db.totpEnrollment.findMany({ where: { userId: { gt: after } }, orderBy: { userId: "asc" }, take: BATCH, select: { userId: true, secret: true } });
    if (rows.length === 0) break;
    for (const row of rows) {
      if (!keys.needsReseal(row.secret)) continue;
      const secret = keys.open(row.userId, row.secret);
      if (secret === null) {
        unreadable += 1;
        continue;
      }
      const { count } = await ctx.db.totpEnrollment.updateMany({ where: { userId: row.userId, secret: row.secret }, data: { secret: keys.seal(row.userId, secret) } });
      resealed += count;
    }
    after = rows.at(-1)?.userId ?? after;
  }
  if (resealed > 0) ctx.logger.info({ resealed }, "TOTP secrets sealed under the current TwoFactor:SecretKey");
  if (unreadable > 0) ctx.logger.error({ unreadable }, "TOTP secrets under a key version that is not configured: list it in TwoFactor:RetiredSecretKeys");
  return { resealed, unreadable };
}
