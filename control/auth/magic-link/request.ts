/**
 * The background half of POST {prefix}/magic-link: lookup, per-address cooldown, token, hook. It
 * runs after the 204, so neither status, body nor timing tells whether the address has an
 * account (enumeration). Hook failures are only logged.
 *
 * A magic link is as strong as a password reset (whoever reads the mailbox signs in), so it obeys
 * the same rules: with `RequireVerifiedEmailForPasswordReset` on, an address nobody proved gets no
 * link; otherwise the link opens the account email/mail-recipient.ts names (the one that proved
 * the address, or the only one that typed it; none when several typed it and none proved it).
 */
import type { AuthContext } from "../context.ts";
import { buildLink } from "../hooks/index.ts";
import { takeMailSlot } from "../passwords/mail-cooldown.ts";
import { mailRecipient } from "../email/mail-recipient.ts";
import { normaliseEmail } from "../sign-in/find-credential.ts";
import { deliver, DeliveryFailed, issueSingleUseToken, requireHook } from "../single-use/index.ts";

export const MAGIC_LINK = "magic-link";

export type MagicLinkOutcome = "sent" | "no-account" | "ambiguous" | "unverified" | "cooldown" | "hook-failed";

export async function sendMagicLink(ctx: AuthContext, email: string): Promise<MagicLinkOutcome> {
  requireHook(ctx, "magicLink");
  const normalized = normaliseEmail(email);
  if (!normalized.includes("@")) return "no-account";
  const recipient = await mailRecipient(ctx.db, normalized);
  if (recipient && "ambiguous" in recipient) return "ambiguous";
  const credential = recipient?.credential;
  if (!credential?.email) return "no-account";
  if (ctx.config.LocalLogin.RequireVerifiedEmailForPasswordReset && credential.emailConfirmedAt === null) return "unverified";
  // MailRequestCooldown: one magic-link mail per address per cooldown (mailbox flooding).
  if (!(await takeMailSlot(ctx, `${MAGIC_LINK}:${normalized}`))) return "cooldown";
  const { token } = await ctx.db.$transaction((tx) =>
    issueSingleUseToken(ctx, tx, { kind: MAGIC_LINK, userId: credential.userId, email: normalized, retireEarlier: true }),
  );
  try {
    await deliver(ctx, "magicLink", {
      to: credential.email,
      userId: credential.userId,
      userName: credential.userName,
      token,
      link: buildLink(ctx.config, MAGIC_LINK, token),
    });
  } catch (error) {
    if (error instanceof DeliveryFailed) return "hook-failed";
    throw error;
  }
  return "sent";
}
