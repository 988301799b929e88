/**
 * POST {prefix}/email (bearer) and POST {prefix}/email/verify (anonymous with the link's token):
 * mapped only when an email-verification hook is registered (login-service.md Endpoints).
 * Both sit behind the per-address rate limit: one takes a password, the other a guessable-looking
 * (though 256-bit) token. The limiter's 429 and the per-account cooldown's 429 say which cause.
 */
import { z } from "zod";
import { mountRoute } from "../../http/route.ts";
import { principalOf, requireBearer } from "../bearer/index.ts";
import { requestEmailChange } from "../email/request-change.ts";
import { verifyEmail } from "../email/verify.ts";
import type { AuthRouteDeps } from "../feature.ts";
import { authRateLimit } from "../rate-limit/index.ts";
import { emailField } from "./account-fields.ts";

const changeBody = z.object({
  newEmail: emailField,
  currentPassword: z.string({ error: "Enter your current password." }).min(1, "Enter your current password.").max(4096, "The current password is not correct."),
});

const verifyBody = z.object({
  token: z.string({ error: "The link is incomplete. Open the link from the email again." }).min(1, "The link is incomplete. Open the link from the email again.").max(512, "This verification link is not valid."),
});

export function emailRoutes({ ctx, target }: AuthRouteDeps): void {
  if (!ctx.hooks.emailVerification) return;
  mountRoute(target, {
    method: "post",
    path: "/email",
    family: "auth",
    tag: "account",
    summary: "Ask for a verification link to a new (or the current) address; the change applies when the link is opened",
    security: "bearer",
    body: changeBody,
    before: [requireBearer(ctx), authRateLimit(ctx)],
    responses: {
      204: { description: "Link sent to the new address" },
      400: { description: "Input to correct (`errors`), e.g. a wrong current password" },
      409: { description: "Another account holds the address" },
      429: { description: "Rate limit or per-account cooldown (`errors` says which)" },
    },
    handler: async ({ req, res, body }) => {
      await requestEmailChange(ctx, { userId: principalOf(req).userId, newEmail: body.newEmail, currentPassword: body.currentPassword });
      res.status(204).end();
    },
  });
  mountRoute(target, {
    method: "post",
    path: "/email/verify",
    family: "auth",
    tag: "account",
    summary: "Redeem an email-verification link",
    body: verifyBody,
    before: [authRateLimit(ctx)],
    responses: {
      204: { description: "Address written and confirmed" },
      400: { description: "Bad, used or expired link" },
      409: { description: "Another account holds the address" },
    },
    handler: async ({ res, body }) => {
      await verifyEmail(ctx, body.token);
      res.status(204).end();
    },
  });
}
