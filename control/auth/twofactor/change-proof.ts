/**
 * Proof of presence before a second factor changes (issue #14 finding 2; ASVS 5.0 7.5.1): TOTP
 * enrolment and confirmation, registering or deleting a passkey. A bearer token alone is not
 * enough: a stolen access token could otherwise plant the thief's own factor, which survives a
 * password reset and locks the owner out with the attacker's code (or strip the owner's passkey).
 *
 * Accepted proofs, any one of:
 *  - `currentPassword` in the body, checked under the account lockout (passwords/current-password.ts);
 *  - when a second factor is enrolled: a live second factor within `TwoFactor:FreshnessWindow`,
 *    i.e. `toa_2fa_at` of a locally issued access token (a step-up gives a fresh one);
 *  - for an account with no password (it arrived through an external provider): a sign-in within
 *    `TwoFactor:FreshnessWindow`, `auth_time` of the access token presented (never of an ID token).
 * Anything else answers 400 `{errors}`.
 */
import { z } from "zod";
import { fail } from "../../http/errors.ts";
import { isFresh, type Principal } from "../bearer/index.ts";
import type { AuthContext } from "../context.ts";
import { checkCurrentPassword, LOCKED_CURRENT_PASSWORD, WRONG_CURRENT_PASSWORD } from "../passwords/current-password.ts";
import { hasSecondFactor } from "./gate.ts";

/** The body field every factor change accepts (null or omitted: no password offered). */
export const currentPasswordField = z.string().max(4096, WRONG_CURRENT_PASSWORD).nullish();

export const PROOF_NEEDED = "Confirm it is you: enter your current password, or verify with your second factor again.";

export async function requireFactorChangeProof(ctx: AuthContext, principal: Principal, currentPassword: string | null | undefined): Promise<void> {
  const windowMs = ctx.config.TwoFactor.FreshnessWindow;
  const nowMs = ctx.now().getTime();
  if (typeof currentPassword === "string" && currentPassword !== "") {
    const check = await checkCurrentPassword(ctx, principal.userId, currentPassword);
    if (check.outcome === "ok") return;
    if (check.outcome === "locked") throw fail.badRequest(LOCKED_CURRENT_PASSWORD);
    if (check.outcome === "wrong") throw fail.badRequest(WRONG_CURRENT_PASSWORD);
    // No password on this account: fall through to the other proofs.
  }
  // Only this service's own claims say when a second factor of ours was used.
  if (principal.local && isFresh(principal.claims.toa_2fa_at, windowMs, nowMs) && (await hasSecondFactor(ctx, principal.userId))) return;
  if (principal.accessToken && isFresh(principal.claims.auth_time, windowMs, nowMs)) {
    const hasPassword = (await ctx.db.passwordCredential.count({ where: { userId: principal.userId } })) > 0;
    if (!hasPassword) return;
  }
  throw fail.badRequest(PROOF_NEEDED);
}
