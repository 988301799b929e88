/**
 * POST {prefix}/password/forgot: 204 for every input, at once. The lookup and the mail run after
 * the response on the background queue (Account rule 6), so neither the status, the body nor the
 * response time tells whether an account has this address (account enumeration).
 */
import { z } from "zod";
import { mountRoute } from "../../http/route.ts";
import type { AuthRouteDeps } from "../feature.ts";
import { sendPasswordReset } from "../passwords/reset-tokens.ts";
import { authRateLimit } from "../rate-limit/index.ts";
import { EMAIL_MAX } from "./account-fields.ts";

/**
 * "204 always" (Account rule 6): a missing or ill-typed `email` is no account, so it gets the same
 * 204 as an unknown address rather than a 400 that would make this input distinguishable.
 */
const body = z.object({ email: z.string().optional().catch(undefined) }).catch({});

export function forgotRoutes({ ctx, target, background }: AuthRouteDeps): void {
  mountRoute(target, {
    method: "post",
    path: "/password/forgot",
    family: "auth",
    tag: "password",
    summary: "Ask for a password-reset link (always 204; the link is mailed if the address has an account)",
    body,
    before: [authRateLimit(ctx)],
    responses: { 204: { description: "Accepted" } },
    handler: ({ res, body: input }) => {
      res.status(204).end();
      const email = input.email?.trim() ?? "";
      if (email.length === 0 || email.length > EMAIL_MAX || !email.includes("@")) return;
      background.push("password-reset", async () => {
        const outcome = await sendPasswordReset(ctx, email);
        ctx.logger.debug({ outcome }, "password-reset request handled");
      });
    },
  });
}
