/**
 * POST {prefix}/register (mapped only when `AllowSelfRegistration`): creates an account with a
 * password and signs it in (201 token pair). A taken user name is 409 (Account rule 2: registration
 * reveals whether a name exists, by design); the address is stored unproven and may be typed by
 * several accounts until someone proves it.
 */
import { z } from "zod";
import { mountRoute } from "../../http/route.ts";
import type { AuthRouteDeps } from "../feature.ts";
import { assertAcceptablePassword } from "../passwords/policy.ts";
import { createPasswordAccount } from "../passwords/create-account.ts";
import { authRateLimit } from "../rate-limit/index.ts";
import { completeSignIn } from "../sign-in/complete.ts";
import { tokenPairSchema } from "../sign-in/token-pair.ts";
import { emailField, userNameField } from "./account-fields.ts";

const body = z.object({
  userName: userNameField,
  email: emailField,
  password: z.string({ error: "Choose a password." }),
});

export function registerRoutes({ ctx, target }: AuthRouteDeps): void {
  if (!ctx.config.LocalLogin.AllowSelfRegistration) return;
  mountRoute(target, {
    method: "post",
    path: "/register",
    family: "auth",
    tag: "auth",
    summary: "Create an account with a password and sign in",
    body,
    before: [authRateLimit(ctx)],
    responses: {
      201: { description: "Account created; token pair", schema: tokenPairSchema },
      400: { description: "Input to correct (`errors`)" },
      409: { description: "The user name is taken" },
    },
    handler: async ({ req, res, body: input }) => {
      assertAcceptablePassword(ctx.config, input.password);
      const userId = await createPasswordAccount(ctx, { userName: input.userName, email: input.email, password: input.password });
      ctx.logger.info({ userId }, "account registered");
      const pair = await completeSignIn(ctx, { userId, amr: ["pwd"], authTime: ctx.now(), req });
      res.status(201).json(pair);
    },
  });
}
