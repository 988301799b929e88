/**
 * POST {prefix}/magic-link {email} → 204 always; POST {prefix}/magic-link/verify {token,
 * deviceToken?} → 200 token pair, 200 challenge (enrolled user), 401 invalid_grant. Mapped only
 * when a magic-link hook is registered. The request answers before any lookup (the work runs on
 * the background queue), so it reveals nothing about which addresses have accounts.
 */
import { z } from "zod";
import { fail } from "../../http/errors.ts";
import { mountRoute } from "../../http/route.ts";
import type { AuthRouteDeps } from "../feature.ts";
import { sendMagicLink } from "../magic-link/request.ts";
import { verifyMagicLink } from "../magic-link/verify.ts";
import { revokeIfSpent } from "../devices/redeem.ts";
import { presentedDeviceToken } from "../twofactor/gate.ts";
import { authRateLimit } from "../rate-limit/index.ts";
import { tokenPairSchema } from "../sign-in/token-pair.ts";
import { EMAIL_MAX } from "./account-fields.ts";

/** "204 always" (decisions.md): a missing or ill-typed `email` is answered like an unknown address. */
const requestBody = z.object({ email: z.string().optional().catch(undefined) }).catch({});

/**
 * Malformed input (`{token: 5}`, an ill-typed `deviceToken`, `[]`, `null`) is the same 401 as a
 * used link, unread: the spec lists only 200 and 401, and there is nothing to correct on an
 * anonymous sign-in. The empty token stands for "malformed" and is refused by the handler.
 */
const verifyBody = z
  .object({
    token: z.string().default(""),
    deviceToken: z.string().nullish(),
  })
  .catch({ token: "", deviceToken: undefined });

const TOKEN_MAX = 512;

export function magicLinkRoutes({ ctx, target, background }: AuthRouteDeps): void {
  if (!ctx.hooks.magicLink) return;
  mountRoute(target, {
    method: "post",
    path: "/magic-link",
    family: "auth",
    tag: "auth",
    summary: "Ask for a sign-in link by email (always 204)",
    body: requestBody,
    before: [authRateLimit(ctx)],
    responses: { 204: { description: "Accepted; a link is mailed if the address has an account" } },
    handler: ({ res, body }) => {
      res.status(204).end();
      const email = body.email?.trim() ?? "";
      if (email.length === 0 || email.length > EMAIL_MAX || !email.includes("@")) return;
      background.push("magic-link", async () => {
        const outcome = await sendMagicLink(ctx, email);
        ctx.logger.debug({ outcome }, "magic-link request handled");
      });
    },
  });
  mountRoute(target, {
    method: "post",
    path: "/magic-link/verify",
    family: "auth",
    tag: "auth",
    summary: "Sign in with a magic link's token",
    body: verifyBody,
    before: [authRateLimit(ctx)],
    responses: {
      200: { description: "Token pair, or a two-factor challenge for an enrolled user", schema: tokenPairSchema },
      401: { description: "Unknown, used or expired link" },
    },
    handler: async ({ req, res, body }) => {
      // A spent device token revokes its device whatever the link (Sign-in rule 3).
      const deviceToken = ctx.config.TrustedDevices.Enabled ? presentedDeviceToken(req, body.deviceToken) : null;
      if (deviceToken !== null) await revokeIfSpent(ctx, deviceToken);
      const token = body.token.length > 0 && body.token.length <= TOKEN_MAX ? body.token : "";
      if (token === "") throw fail.invalidGrant();
      const outcome = await verifyMagicLink(ctx, { token, deviceToken: body.deviceToken, req });
      res.status(200).json(outcome.body);
    },
  });
}
