/**
 * Invitations (login-service.md Endpoints, Account rules 13, 14): mapped when an invitation hook
 * is registered. Creating and revoking are admin endpoints and also need `Oidc:AdminRole`;
 * completion is anonymous with the mailed token and is mapped whether or not an admin role is set.
 */
import { z } from "zod";
import { mountRoute } from "../../http/route.ts";
import { requireAdmin, requireBearer } from "../bearer/index.ts";
import type { AuthRouteDeps } from "../feature.ts";
import { completeInvitation } from "../invitations/complete.ts";
import { createInvitation } from "../invitations/create.ts";
import { revokeInvitation } from "../invitations/revoke.ts";
import { authRateLimit } from "../rate-limit/index.ts";
import { tokenPairSchema } from "../sign-in/token-pair.ts";
import { emailField, userNameField } from "./account-fields.ts";

const emailBody = z.object({ email: emailField });

const completeBody = z.object({
  token: z.string({ error: "The invitation link is incomplete. Open the link from the email again." }).min(1, "The invitation link is incomplete. Open the link from the email again.").max(512, "This invitation link is not valid."),
  userName: userNameField,
  password: z.string({ error: "Choose a password." }),
});

const invitationSchema = z.object({ userId: z.string(), email: z.string() });

export function invitationRoutes({ ctx, target }: AuthRouteDeps): void {
  if (!ctx.hooks.invitation) return;
  if (ctx.config.Oidc.AdminRole !== undefined) {
    const admin = [requireBearer(ctx), requireAdmin(ctx)];
    mountRoute(target, {
      method: "post",
      path: "/invitations",
      family: "auth",
      tag: "admin",
      summary: "Invite an address: reserves an account and mails a single-use link",
      security: "bearer",
      body: emailBody,
      before: admin,
      responses: {
        201: { description: "Invitation open", schema: invitationSchema },
        400: { description: "Input to correct (`errors`), also an address another account holds verified" },
        403: { description: "Not an administrator" },
        502: { description: "The hook failed (a new reservation is rolled back)" },
      },
      handler: async ({ res, body }) => {
        res.status(201).json(await createInvitation(ctx, body.email));
      },
    });
    mountRoute(target, {
      method: "post",
      path: "/invitations/revoke",
      family: "auth",
      tag: "admin",
      summary: "Revoke the open invitation of an address",
      security: "bearer",
      body: emailBody,
      before: admin,
      responses: {
        204: { description: "Reservation removed; its links stop working" },
        403: { description: "Not an administrator" },
        404: { description: "No open invitation for the address" },
      },
      handler: async ({ res, body }) => {
        await revokeInvitation(ctx, body.email);
        res.status(204).end();
      },
    });
  }
  mountRoute(target, {
    method: "post",
    path: "/invitations/complete",
    family: "auth",
    tag: "auth",
    summary: "Complete an invitation: choose a user name and password, and sign in",
    body: completeBody,
    before: [authRateLimit(ctx)],
    responses: {
      201: { description: "Account ready; token pair", schema: tokenPairSchema },
      400: { description: "Input to correct, or a bad or used link" },
      409: { description: "The user name is taken (the link still works)" },
    },
    handler: async ({ req, res, body }) => {
      res.status(201).json(await completeInvitation(ctx, { token: body.token, userName: body.userName, password: body.password, req }));
    },
  });
}
