/**
 * Asking for an email change (Account rule 7): the current password always (also for the current
 * address: that is the resend / re-verification path), a link to the new address only, nothing
 * moves until the link is redeemed. The password stops someone at an unlocked screen (or holding
 * a stolen access token) from pointing the account at their own mailbox and then resetting the
 * password through it.
 */
import { AppError, fail } from "../../http/errors.ts";
import type { AuthContext } from "../context.ts";
import { buildLink } from "../hooks/index.ts";
import { takeMailSlot } from "../passwords/mail-cooldown.ts";
import { checkCurrentPassword, LOCKED_CURRENT_PASSWORD, WRONG_CURRENT_PASSWORD } from "../passwords/current-password.ts";
import { deliver, DeliveryFailed, issueSingleUseToken, requireHook, retireTokens } from "../single-use/index.ts";
import { assertAddressFree, normaliseEmail } from "./address.ts";

export const EMAIL_VERIFICATION = "email-verification";

export interface EmailChangeRequest {
  userId: string;
  newEmail: string;
  currentPassword: string;
}

export async function requestEmailChange(ctx: AuthContext, input: EmailChangeRequest): Promise<void> {
  requireHook(ctx, "emailVerification");
  const credential = await ctx.db.passwordCredential.findUnique({ where: { userId: input.userId } });
  if (!credential) throw fail.badRequest("This account has no password yet. Set a password first.");
  // A wrong current password is a password guess: it counts toward the account lockout.
  const check = await checkCurrentPassword(ctx, input.userId, input.currentPassword);
  if (check.outcome === "locked") throw fail.badRequest(LOCKED_CURRENT_PASSWORD);
  if (check.outcome !== "ok") throw fail.badRequest(WRONG_CURRENT_PASSWORD);
  const normalized = normaliseEmail(input.newEmail);
  await assertAddressFree(ctx.db, input.userId, normalized);

  // Per-account cooldown: a signed-in attacker (or a stuck client) cannot use us to flood a
  // stranger's mailbox with verification mail.
  const cooldownKey = `email-change:${input.userId}`;
  if (!(await takeMailSlot(ctx, cooldownKey))) {
    throw fail.tooManyRequests(ctx.config.LocalLogin.MailRequestCooldown / 1000, "A verification link was sent to this account a moment ago. Wait a minute before asking for another one.");
  }

  // Only the newest link works: a change asked for earlier (perhaps to another address) dies.
  const { token, id } = await ctx.db.$transaction((tx) =>
    issueSingleUseToken(ctx, tx, { kind: EMAIL_VERIFICATION, userId: input.userId, email: input.newEmail, retireEarlier: true }),
  );
  try {
    await deliver(ctx, "emailVerification", {
      to: input.newEmail,
      userId: input.userId,
      userName: credential.userName,
      token,
      link: buildLink(ctx.config, EMAIL_VERIFICATION, token),
    });
  } catch (error) {
    if (!(error instanceof DeliveryFailed)) throw error;
    // Nobody received the link: kill it and give the cooldown back so the person can retry now.
    await retireTokens(ctx.db, { kind: EMAIL_VERIFICATION, userId: input.userId, id }, ctx.now());
    await ctx.db.mailCooldown.deleteMany({ where: { key: cooldownKey } });
    // 400, not 502: the Endpoints table lists 204, 400, 409 and 429 for this route (issue #14), and
    // the person can correct this by trying again (nothing moved; the cooldown was given back).
    const message = "The verification link could not be sent. Try again later.";
    throw new AppError("bad_request", { message, errors: [message], cause: error });
  }
  ctx.logger.info({ userId: input.userId }, "email verification link sent");
}
