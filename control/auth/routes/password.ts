/**
 * POST {prefix}/password (bearer): change the password with `currentPassword`, or set a first
 * password for an account that arrived through an external identity provider (Account rule 3).
 * Either way every local session is revoked, devices un-trusted, passkeys deleted and the stamp
 * moved (Account rule 4); a change also retires email-verification links.
 */
import { z } from "zod";
import { fail } from "../../http/errors.ts";
import { mountRoute } from "../../http/route.ts";
import { principalOf, requireBearer, type Principal } from "../bearer/index.ts";
import type { AuthContext } from "../context.ts";
import type { AuthRouteDeps } from "../feature.ts";
import { revokeAllCredentialsSideEffects } from "../passwords/credential-change.ts";
import { setFirstPassword } from "../passwords/first-password.ts";
import { checkCurrentPassword, LOCKED_CURRENT_PASSWORD, WRONG_CURRENT_PASSWORD } from "../passwords/current-password.ts";
import { assertAcceptablePassword } from "../passwords/policy.ts";
import { authRateLimit } from "../rate-limit/index.ts";

const body = z.object({
  /** Omitted or null: a first password (Account rule 3); clients commonly send null for "none". */
  currentPassword: z.string().max(4096, "The current password is not correct.").nullish(),
  newPassword: z.string({ error: "Choose a new password." }),
});

export function passwordRoutes({ ctx, target }: AuthRouteDeps): void {
  mountRoute(target, {
    method: "post",
    path: "/password",
    family: "auth",
    tag: "password",
    summary: "Change the password (or set a first password for an externally signed-in account)",
    security: "bearer",
    body,
    before: [requireBearer(ctx), authRateLimit(ctx)],
    responses: {
      204: { description: "Password set; every local session revoked" },
      400: { description: "Input to correct (`errors`)" },
      429: { description: "Too many attempts from this address" },
    },
    handler: async ({ req, res, body: input }) => {
      const principal = principalOf(req);
      assertAcceptablePassword(ctx.config, input.newPassword);
      if (input.currentPassword === undefined || input.currentPassword === null) await setFirstPassword(ctx, principal, input.newPassword);
      else await changePassword(ctx, principal, input.currentPassword, input.newPassword);
      res.status(204).end();
    },
  });
}

async function changePassword(ctx: AuthContext, principal: Principal, currentPassword: string, newPassword: string): Promise<void> {
  // A wrong current password is a password guess: it counts toward the account lockout.
  const check = await checkCurrentPassword(ctx, principal.userId, currentPassword);
  if (check.outcome !== "ok") {
    if (check.outcome === "no-password") throw fail.badRequest("This account has no password yet. Leave out the current password to set a first one.");
    throw fail.badRequest(check.outcome === "locked" ? LOCKED_CURRENT_PASSWORD : WRONG_CURRENT_PASSWORD);
  }
  const credential = { passwordHash: check.passwordHash };
  const passwordHash = await ctx.hasher.hash(newPassword);
  const { revokedFamilies } = await ctx.db.$transaction(async (tx) => {
    // Conditional on the hash just verified: of two concurrent changes only one applies.
    const { count } = await tx.passwordCredential.updateMany({
      where: { userId: principal.userId, passwordHash: credential.passwordHash },
      data: { passwordHash, failedCount: 0, failureWindowStart: null, lockedUntil: null },
    });
    if (count !== 1) throw fail.badRequest("The password was changed meanwhile. Sign in again and retry.");
    return revokeAllCredentialsSideEffects(ctx, tx, principal.userId, { reason: "password-changed", retireEmailVerification: true });
  });
  ctx.logger.info({ userId: principal.userId, revokedSessions: revokedFamilies.length }, "password changed");
}
