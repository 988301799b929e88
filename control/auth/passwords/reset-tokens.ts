/**
 * Password-reset links: issued in the background after `/password/forgot`, redeemed once by
 * `/password/reset`, and only while the account still holds the address the link was mailed to
 * (the row records it). Only the SHA-256 of a token is stored; the raw token exists for one hook call.
 */
import { randomUUID } from "node:crypto";
import type { AuthContext } from "../context.ts";
import { mailRecipient } from "../email/mail-recipient.ts";
import { normaliseEmail } from "../sign-in/find-credential.ts";
import { hashToken, newOpaqueToken } from "../tokens/opaque.ts";
import { buildLink } from "../hooks/index.ts";
import { takeMailSlot } from "./mail-cooldown.ts";
import { hookFailureFields } from "../single-use/deliver.ts";

export const PASSWORD_RESET = "password-reset";

export type ForgotOutcome = "sent" | "no-account" | "ambiguous" | "unverified" | "cooldown" | "no-address";

/** The background half of forgot: lookup, cooldown, token, hook. Never throws for a hook failure. */
export async function sendPasswordReset(ctx: AuthContext, email: string): Promise<ForgotOutcome> {
  const normalized = normaliseEmail(email);
  // Several accounts typed the address and none proved it: no link (email/mail-recipient.ts).
  const recipient = await mailRecipient(ctx.db, normalized);
  if (recipient && "ambiguous" in recipient) return "ambiguous";
  const credential = recipient?.credential;
  if (!credential) return "no-account";
  // Account rule 9: with the switch on, an address nobody proved cannot receive a reset.
  if (ctx.config.LocalLogin.RequireVerifiedEmailForPasswordReset && credential.emailConfirmedAt === null) return "unverified";
  if (!credential.email) return "no-address";
  if (!(await takeMailSlot(ctx, `${PASSWORD_RESET}:${normalized}`))) return "cooldown";
  const hook = ctx.hooks.passwordReset;
  if (!hook) throw new Error("no password-reset hook is registered");

  const token = newOpaqueToken();
  const now = ctx.now();
  await ctx.db.$transaction(async (tx) => {
    // The newest link is the only one that works: an older mail lying in an inbox is dead.
    await tx.singleUseToken.updateMany({ where: { userId: credential.userId, kind: PASSWORD_RESET, consumedAt: null, retiredAt: null }, data: { retiredAt: now } });
    await tx.singleUseToken.create({
      data: {
        id: randomUUID(),
        kind: PASSWORD_RESET,
        tokenHash: hashToken(token),
        userId: credential.userId,
        email: credential.email,
        createdAt: now,
        expiresAt: new Date(now.getTime() + ctx.config.LocalLogin.PasswordResetTokenLifetime),
      },
    });
  });
  const link = buildLink(ctx.config, "password-reset", token);
  try {
    await hook({ to: credential.email, userId: credential.userId, userName: credential.userName, token, link });
  } catch (error) {
    // Account rule 6: failures are only logged (the caller already has its 204); its class and a
    // plain code only: the message or properties may quote the link the hook was sending.
    ctx.logger.error({ hook: "passwordReset", userId: credential.userId, ...hookFailureFields(error) }, "password-reset hook failed");
    return "sent";
  }
  ctx.logger.info({ userId: credential.userId }, "password-reset link sent");
  return "sent";
}
