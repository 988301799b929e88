/**
 * A first password for an account that arrived through an external identity provider (Account
 * rule 3). Requires a fresh proof of presence in the access token presented (`auth_time` or
 * `toa_2fa_at` within FirstPasswordProofWindow): a stolen, hours-old access token must not be
 * enough to plant a password and so gain a lasting credential. The user name is the provider's
 * handle; a missing or address-shaped handle is refused, since user names cannot contain `@`.
 */
import { z } from "zod";
import { isUniqueViolation } from "../../db/client.ts";
import { fail } from "../../http/errors.ts";
import type { Principal } from "../bearer/index.ts";
import type { AuthContext } from "../context.ts";
import { normaliseUserName } from "../sign-in/find-credential.ts";
import { revokeAllCredentialsSideEffects } from "./credential-change.ts";

const epochSeconds = z.number().finite();

/** "5 minutes", "1 minute", "15 seconds": a window under a minute is not "0 minutes". */
export function spokenWindow(ms: number): string {
  const unit = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  return ms < 60_000 ? unit(Math.max(1, Math.round(ms / 1000)), "second") : unit(Math.round(ms / 60_000), "minute");
}

export async function setFirstPassword(ctx: AuthContext, principal: Principal, newPassword: string): Promise<void> {
  const existing = await ctx.db.passwordCredential.findUnique({ where: { userId: principal.userId }, select: { userId: true } });
  if (existing) throw fail.badRequest("Enter your current password to change it.");
  const windowMs = ctx.config.LocalLogin.FirstPasswordProofWindow;
  // auth_time only from an access token (Account rule 3): an ID token's says when someone signed
  // in to the client it was minted for, not that the bearer of this request just did. toa_2fa_at
  // only from our own tokens (as for a factor change, twofactor/change-proof.ts): it is this
  // service's claim, and another issuer's claim of that name says nothing about our factors.
  const proofs = [principal.accessToken ? principal.claims.auth_time : undefined, principal.local ? principal.claims.toa_2fa_at : undefined]
    .map((v) => epochSeconds.safeParse(v))
    .filter((r) => r.success)
    .map((r) => r.data * 1000);
  const now = ctx.now().getTime();
  // A proof dated in the future (beyond small skew) is as suspect as a stale one.
  if (!proofs.some((at) => now - at <= windowMs && at - now <= 60_000)) {
    throw fail.badRequest(`Sign in again to confirm it is you, then set the password within ${spokenWindow(windowMs)}.`);
  }
  const user = await ctx.db.user.findUnique({ where: { id: principal.userId }, select: { externalHandle: true } });
  const handle = user?.externalHandle?.trim();
  if (!handle || handle.includes("@")) {
    throw fail.badRequest("This account has no user name from its identity provider that can be used to sign in with a password.");
  }
  const passwordHash = await ctx.hasher.hash(newPassword);
  try {
    await ctx.db.$transaction(async (tx) => {
      // Signs in with the user name only: the credential carries no email address (Account rule 3).
      await tx.passwordCredential.create({
        data: { userId: principal.userId, userName: handle, normalizedUserName: normaliseUserName(handle), passwordHash },
      });
      await revokeAllCredentialsSideEffects(ctx, tx, principal.userId, { reason: "password-changed", retireEmailVerification: true });
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw fail.badRequest(`The user name "${handle}" is already used by another account, so a password cannot be added here.`);
    throw error;
  }
  ctx.logger.info({ userId: principal.userId }, "first password set");
}
