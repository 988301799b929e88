/**
 * POST {prefix}/login: identifier (user name or email) and password → token pair, or (once the
 * two-factor step is wired) a challenge. Every refusal is the same 401 and takes at least
 * SignInRefusalFloor (Sign-in rule 2).
 */
import { z } from "zod";
import { AppError, fail } from "../../http/errors.ts";
import { mountRoute } from "../../http/route.ts";
import type { AuthRouteDeps } from "../feature.ts";
import { authRateLimit } from "../rate-limit/index.ts";
import { verifyPasswordSignIn } from "../sign-in/password-sign-in.ts";
import { refusalFloor } from "../sign-in/refusal-floor.ts";
import { tokenPairSchema } from "../sign-in/token-pair.ts";
import { presentedDeviceToken, secondFactorGate } from "../twofactor/gate.ts";
import { revokeIfSpent } from "../devices/redeem.ts";
import { metrics } from "../../metrics/index.ts";

/**
 * Bounded before any hashing: PBKDF2 cost does not grow with length (HMAC pre-hashes long keys),
 * but an unbounded body field is still needless work. Refusals here are the same 401 as a wrong
 * password, not a 400 that would reveal the policy on an anonymous endpoint.
 */
const MAX_FIELD = 4096;

/**
 * An empty, missing or ill-typed identifier or password names no account and matches no password:
 * the collapsed 401 after the refusal floor (the Endpoints table lists only 200 and 401 for
 * login), not a 400 that answers differently.
 */
const unusable = (field: string): boolean => field.length === 0 || field.length > MAX_FIELD;

const body = z.object({
  identifier: z.string().catch(""),
  password: z.string().catch(""),
  /** Trusted-device token (Sign-in rule 1); an ill-typed one is no token, like an unknown one. */
  deviceToken: z.string().nullish().catch(undefined),
});

export function loginRoutes({ ctx, target }: AuthRouteDeps): void {
  mountRoute(target, {
    method: "post",
    path: "/login",
    family: "auth",
    tag: "auth",
    summary: "Sign in with a user name or email address and a password",
    body,
    before: [authRateLimit(ctx)],
    responses: {
      200: { description: "Token pair (or a two-factor challenge for an enrolled user)", schema: tokenPairSchema },
      401: { description: "Credentials not accepted (one body for every cause)" },
    },
    handler: async ({ req, res, body: input }) => {
      const floor = refusalFloor(ctx.config.LocalLogin.SignInRefusalFloor);
      // A spent device token revokes its device whatever the password (Sign-in rule 3).
      const deviceToken = ctx.config.TrustedDevices.Enabled ? presentedDeviceToken(req, input.deviceToken) : null;
      if (deviceToken !== null) await revokeIfSpent(ctx, deviceToken);
      const result = unusable(input.identifier) || unusable(input.password)
        ? ({ outcome: "refused", reason: "unknown-user", userId: null } as const)
        : await verifyPasswordSignIn(ctx, input.identifier, input.password);
      if (result.outcome === "refused") {
        ctx.logger.info({ userId: result.userId, reason: result.reason }, "sign-in refused");
        metrics.login("refused", result.reason);
        await floor.wait();
        throw fail.invalidGrant();
      }
      const gate = await secondFactorGate(ctx, { userId: result.userId, amr: result.amr, authTime: result.authTime, stamp: result.stamp, deviceToken: input.deviceToken, req }).catch(
        async (error: unknown) => {
          // A credential change won the race (StampMoved → invalid_grant): a refusal like any other.
          if (error instanceof AppError && error.code === "invalid_grant") await floor.wait();
          throw error;
        },
      );
      metrics.login(gate.kind === "challenge" ? "challenge" : "success");
      res.json(gate.body);
    },
  });
}
