/**
 * POST {prefix}/logout: revokes the session the refresh token belongs to. Always 204, so the
 * endpoint cannot be used to test whether a token exists. A trusted device stays trusted
 * (Sign-in rule 5).
 */
import { z } from "zod";
import { mountRoute } from "../../http/route.ts";
import type { AuthRouteDeps } from "../feature.ts";
import { authRateLimit } from "../rate-limit/index.ts";
import { revokeFamily } from "../sessions/revoke.ts";
import { hashToken } from "../tokens/opaque.ts";

/**
 * The spec's transition is "always answers 204": a missing, ill-typed or oversized token is a token
 * that does not exist, so it gets the same 204 (and nothing is looked up).
 */
const TOKEN_MAX = 512;
const body = z.object({ refreshToken: z.string().optional().catch(undefined) }).catch({});

export function logoutRoutes({ ctx, target }: AuthRouteDeps): void {
  mountRoute(target, {
    method: "post",
    path: "/logout",
    family: "auth",
    tag: "auth",
    summary: "Sign out: revoke the session of a refresh token (204 whether or not it existed)",
    body,
    before: [authRateLimit(ctx)],
    responses: { 204: { description: "Signed out (or there was nothing to sign out)" } },
    handler: async ({ res, body: input }) => {
      if (input.refreshToken === undefined || input.refreshToken.length > TOKEN_MAX) {
        res.status(204).end();
        return;
      }
      const row = await ctx.db.refreshToken.findUnique({ where: { tokenHash: hashToken(input.refreshToken) }, select: { familyId: true, family: { select: { userId: true } } } });
      if (row && (await revokeFamily(ctx, { familyId: row.familyId, reason: "logout" }))) {
        ctx.logger.info({ userId: row.family.userId, familyId: row.familyId }, "signed out");
      }
      res.status(204).end();
    },
  });
}
