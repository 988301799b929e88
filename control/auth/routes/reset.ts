/**
 * POST {prefix}/password/reset: redeems a reset link once. The token is consumed by a conditional
 * update inside the transaction that writes the password and revokes everything (Account rule 4),
 * so of concurrent redemptions exactly one succeeds and a replayed link is refused.
 */
import { z } from "zod";
import { fail } from "../../http/errors.ts";
import { mountRoute } from "../../http/route.ts";
import type { AuthRouteDeps } from "../feature.ts";
import { revokeAllCredentialsSideEffects } from "../passwords/credential-change.ts";
import { assertAcceptablePassword } from "../passwords/policy.ts";
import { PASSWORD_RESET } from "../passwords/reset-tokens.ts";
import { authRateLimit } from "../rate-limit/index.ts";
import { hashToken } from "../tokens/opaque.ts";
import { normaliseEmail } from "../sign-in/find-credential.ts";

const body = z.object({
  token: z.string({ error: "The reset link is incomplete. Open the link from the email again." }).max(512, "This reset link is not valid."),
  newPassword: z.string({ error: "Choose a new password." }),
});

const BAD_LINK = "This reset link is not valid or has expired. Ask for a new one.";

export function resetRoutes({ ctx, target }: AuthRouteDeps): void {
  mountRoute(target, {
    method: "post",
    path: "/password/reset",
    family: "auth",
    tag: "password",
    summary: "Set a new password with a reset link's token",
    body,
    before: [authRateLimit(ctx)],
    responses: { 204: { description: "Password set; every local session revoked" }, 400: { description: "Weak password, or a bad or used link" } },
    handler: async ({ res, body: input }) => {
      assertAcceptablePassword(ctx.config, input.newPassword);
      const tokenHash = hashToken(input.token);
      const row = await ctx.db.singleUseToken.findUnique({ where: { tokenHash } });
      if (!row || row.kind !== PASSWORD_RESET) throw fail.badRequest(BAD_LINK);
      const passwordHash = await ctx.hasher.hash(input.newPassword);
      const now = ctx.now();
      const revoked = await ctx.db.$transaction(async (tx) => {
        const { count } = await tx.singleUseToken.updateMany({
          where: { id: row.id, consumedAt: null, retiredAt: null, expiresAt: { gt: now } },
          data: { consumedAt: now },
        });
        if (count !== 1) return null;
        // Only while the account still holds the address the link was mailed to: once the owner
        // moved to another address (or someone else proved this one and it was released), a link
        // lying in the old mailbox must not reset the password (issue #14). The token stays spent.
        if (row.email === null) return null;
        const updated = await tx.passwordCredential.updateMany({
          where: { userId: row.userId, normalizedEmail: normaliseEmail(row.email) },
          data: { passwordHash, failedCount: 0, failureWindowStart: null, lockedUntil: null },
        });
        if (updated.count !== 1) return null;
        return revokeAllCredentialsSideEffects(ctx, tx, row.userId, { reason: "password-reset", retireEmailVerification: true });
      });
      if (!revoked) throw fail.badRequest(BAD_LINK);
      ctx.logger.info({ userId: row.userId, revokedSessions: revoked.revokedFamilies.length }, "password reset");
      res.status(204).end();
    },
  });
}
