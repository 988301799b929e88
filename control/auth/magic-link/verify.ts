/**
 * Redeeming a magic link: the token is consumed by a conditional update (of concurrent
 * redemptions exactly one wins; a replayed link is refused), and only while the account still
 * holds the address the link was mailed to. An address released (someone else proved it) or
 * changed since the mail was sent no longer opens the account, so a stale link in a former
 * mailbox is dead.
 *
 * amr: RFC 8176 registers no value for "proved control of a mailbox". "otp" would claim a
 * one-time code from an authenticator and "pwd" a memorised secret; both would mislead policies
 * that read amr. We use the unregistered value "email" (RFC 8176 section 2 allows values outside
 * the registry), which no consumer will mistake for a second factor. The second-factor gate then
 * adds "otp"/"mfa" as for a password sign-in.
 */
import type { Request } from "express";
import { fail } from "../../http/errors.ts";
import type { AuthContext } from "../context.ts";
import { consumeSingleUseToken } from "../single-use/index.ts";
import { secondFactorGate, type GateOutcome } from "../twofactor/gate.ts";
import { MAGIC_LINK } from "./request.ts";

export const MAGIC_LINK_AMR = ["email"];

export async function verifyMagicLink(ctx: AuthContext, input: { token: string; deviceToken?: string | null | undefined; req: Request }): Promise<GateOutcome> {
  const now = ctx.now();
  const redeemed = await ctx.db.$transaction(async (tx) => {
    const row = await consumeSingleUseToken(tx, MAGIC_LINK, input.token, now);
    if (!row?.email) return null;
    const holder = await tx.passwordCredential.findUnique({ where: { userId: row.userId }, select: { normalizedEmail: true, user: { select: { securityStamp: true } } } });
    return holder?.normalizedEmail === row.email ? { userId: row.userId, stamp: holder.user.securityStamp } : null;
  });
  if (!redeemed) throw fail.invalidGrant();
  const { userId, stamp } = redeemed;
  ctx.logger.info({ userId }, "magic link redeemed");
  return secondFactorGate(ctx, { userId, amr: MAGIC_LINK_AMR, authTime: now, stamp, deviceToken: input.deviceToken, req: input.req });
}
