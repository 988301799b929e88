/**
 * An admin overwrites a password (Account rules 4, 9, 11, 12). Every refusal happens before
 * anything changes. The password is mailed only to the credential's own address, never to the
 * profile email an identity provider wrote: a provider-controlled (or attacker-edited) profile
 * field must not become a channel that hands out the account's password.
 *
 * Order: write the hash and revoke every session, device and passkey (moving the stamp) in one
 * transaction FIRST, then call the hook. If the hook throws, the answer is 502 and nothing is
 * undone: whoever held the account (the usual reason an admin resets it) stays locked out.
 */
import { AppError, fail } from "../../http/errors.ts";
import type { AuthContext } from "../context.ts";
import { revokeAllCredentialsSideEffects } from "../passwords/credential-change.ts";
import { assertAcceptablePassword } from "../passwords/policy.ts";
import { deliver, DeliveryFailed, requireHook } from "../single-use/index.ts";
import { generatePassword } from "./generated-password.ts";

export async function adminSetPassword(ctx: AuthContext, input: { userId: string; password: string | null }): Promise<void> {
  requireHook(ctx, "adminPasswordIssued");
  const user = await ctx.db.user.findUnique({ where: { id: input.userId }, include: { credential: true } });
  // 400, not 404: the Endpoints table lists 204, 400, 403 and 502 for this route (issue #14).
  if (!user) throw fail.badRequest("No such user.");
  const credential = user.credential;
  if (!credential) throw fail.badRequest("This account has no local password credential.");
  const address = credential.email;
  if (address === null && input.password === null) {
    throw fail.badRequest("This account has no email address to send a generated password to: give the password in the request.");
  }
  // Account rule 9: a password mailed to an address nobody proved may land in a stranger's inbox.
  if (address !== null && ctx.config.LocalLogin.RequireVerifiedEmailForPasswordReset && credential.emailConfirmedAt === null) {
    throw fail.badRequest("This account's email address is not verified, so no password can be set for it until it is.");
  }
  if (input.password !== null) assertAcceptablePassword(ctx.config, input.password);
  const password = input.password ?? generatePassword(ctx.config);
  const passwordHash = await ctx.hasher.hash(password);

  const revoked = await ctx.db.$transaction(async (tx) => {
    const { count } = await tx.passwordCredential.updateMany({
      where: { userId: input.userId },
      data: { passwordHash, failedCount: 0, failureWindowStart: null, lockedUntil: null },
    });
    if (count !== 1) throw fail.badRequest("This account has no local password credential.");
    return revokeAllCredentialsSideEffects(ctx, tx, input.userId, { reason: "admin-password-set" });
  });
  ctx.logger.info({ userId: input.userId, revokedSessions: revoked.revokedFamilies.length, generatedPassword: input.password === null }, "password set by an administrator");
  if (address === null) return;
  try {
    await deliver(ctx, "adminPasswordIssued", { to: address, userId: input.userId, userName: credential.userName, password });
  } catch (error) {
    if (!(error instanceof DeliveryFailed)) throw error;
    throw new AppError("notification_failed", {
      message: "The password was set and every session revoked, but the password could not be delivered. Set a new one.",
      cause: error,
    });
  }
}
