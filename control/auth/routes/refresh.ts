/**
 * POST {prefix}/refresh: rotates the refresh token (Sign-in rule 6) and answers a new token pair
 * whose claims are recomputed from the user and carried from the session.
 */
import { z } from "zod";
import { fail } from "../../http/errors.ts";
import { mountRoute } from "../../http/route.ts";
import type { AuthRouteDeps } from "../feature.ts";
import { authRateLimit } from "../rate-limit/index.ts";
import { clientInfo } from "../sessions/client-info.ts";
import { tokenPair } from "../sign-in/complete.ts";
import { tokenPairSchema } from "../sign-in/token-pair.ts";
import { issueAccessTokenFrom } from "../tokens/access-token.ts";
import { rotateRefreshToken } from "../tokens/refresh-tokens.ts";
import { metrics } from "../../metrics/index.ts";

/**
 * The Endpoints table lists only 200 and 401 for refresh: a missing or ill-typed token is no token,
 * and any string, empty or however long, is a token that either exists or not; every one of them
 * is the collapsed 401 (Errors table), never a 400.
 */
const TOKEN_MAX = 512;
const body = z.object({
  refreshToken: z.string().catch(""),
});

export function refreshRoutes({ ctx, target, refreshStore }: AuthRouteDeps): void {
  mountRoute(target, {
    method: "post",
    path: "/refresh",
    family: "auth",
    tag: "auth",
    summary: "Exchange a refresh token for a new token pair (the refresh token rotates)",
    body,
    before: [authRateLimit(ctx)],
    responses: {
      200: { description: "New token pair", schema: tokenPairSchema },
      401: { description: "Refresh token not accepted" },
    },
    handler: async ({ req, res, body: input }) => {
      if (input.refreshToken.length === 0 || input.refreshToken.length > TOKEN_MAX) {
        metrics.refresh("refused", "unknown");
        throw fail.invalidGrant();
      }
      const result = await rotateRefreshToken(ctx, refreshStore, input.refreshToken, clientInfo(req, ctx.config.LocalLogin.IpAddressStorage));
      if (result.outcome === "refused") {
        ctx.logger.info({ reason: result.reason }, "refresh refused");
        metrics.refresh("refused", result.reason);
        throw fail.invalidGrant();
      }
      const access = await issueAccessTokenFrom(ctx, result.family, result.profile);
      metrics.refresh("success");
      res.json(tokenPair(access, result.refreshToken));
    },
  });
}
