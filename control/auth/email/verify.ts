/**
 * Redeeming an email-verification link (Account rules 7, 8): in one transaction the token is
 * consumed, the address re-checked (another account may have proven it since the link was sent),
 * written and confirmed on the credential and the profile, and released from every account that
 * only typed it. The security stamp does not move and nobody is signed out: proving an address
 * changes no credential.
 */
import { fail } from "../../http/errors.ts";
import type { AuthContext } from "../context.ts";
import { consumeSingleUseToken } from "../single-use/index.ts";
import { hashToken } from "../tokens/opaque.ts";
import { assertAddressFree, lockAddress, normaliseEmail, releaseFromOthers } from "./address.ts";
import { EMAIL_VERIFICATION } from "./request-change.ts";

const BAD_LINK = "This verification link is not valid or has expired. Ask for a new one.";

export async function verifyEmail(ctx: AuthContext, token: string): Promise<{ userId: string }> {
  const now = ctx.now();
  const result = await ctx.db.$transaction(async (tx) => {
    // Lock order on PostgreSQL: the account's credential row before any token row, as every
    // credential change (password change, reset, admin set) takes them. Consuming the token first
    // deadlocked with a reset racing this redemption (issue #14, found by its race test).
    const pending = await tx.singleUseToken.findUnique({ where: { tokenHash: hashToken(token) }, select: { userId: true } });
    if (!pending) return null;
    await tx.passwordCredential.updateMany({ where: { userId: pending.userId }, data: { updatedAt: now } });
    const row = await consumeSingleUseToken(tx, EMAIL_VERIFICATION, token, now);
    if (!row?.email) return null;
    const normalized = normaliseEmail(row.email);
    await lockAddress(tx, normalized, now);
    // Throws 409, which rolls the consumption back: the link still works if the other account
    // lets the address go.
    await assertAddressFree(tx, row.userId, normalized);
    const { count } = await tx.passwordCredential.updateMany({
      where: { userId: row.userId },
      data: { email: row.email, normalizedEmail: normalized, emailConfirmedAt: now },
    });
    if (count !== 1) return null;
    await tx.user.update({ where: { id: row.userId }, data: { email: row.email } });
    const released = await releaseFromOthers(tx, row.userId, normalized);
    return { userId: row.userId, released };
  });
  if (!result) throw fail.badRequest(BAD_LINK);
  ctx.logger.info({ userId: result.userId, releasedFromAccounts: result.released }, "email address verified");
  return { userId: result.userId };
}
