/**
 * POST {prefix}/users and POST {prefix}/users/{userId}/password: admin only (`Toamaisutaa.Admin`),
 * mapped only when an admin-password hook is registered and `Oidc:AdminRole` names a role
 * (login-service.md Endpoints, Authentication 3). Neither response carries a password.
 */
import { z } from "zod";
import { mountRoute } from "../../http/route.ts";
import { adminCreateUser } from "../admin/create-user.ts";
import { adminSetPassword } from "../admin/set-password.ts";
import { requireAdmin, requireBearer } from "../bearer/index.ts";
import type { AuthRouteDeps } from "../feature.ts";
import { emailField, userNameField } from "./account-fields.ts";

/** An empty string means "none", like an omitted or null field. */
const blankIsNull = (value: unknown): unknown => (value === "" ? null : value);

const createBody = z.object({
  userName: userNameField,
  email: z.preprocess(blankIsNull, emailField.nullish()),
  password: z.preprocess(blankIsNull, z.string().nullish()),
});

const setBody = z.object({ password: z.preprocess(blankIsNull, z.string().nullish()) }).prefault({});

const createdSchema = z.object({ userId: z.string(), userName: z.string(), email: z.string().nullable() });

export function adminUserRoutes({ ctx, target }: AuthRouteDeps): void {
  if (!ctx.hooks.adminPasswordIssued || ctx.config.Oidc.AdminRole === undefined) return;
  const admin = [requireBearer(ctx), requireAdmin(ctx)];
  mountRoute(target, {
    method: "post",
    path: "/users",
    family: "auth",
    tag: "admin",
    summary: "Create an account for someone (password given or generated and delivered by the hook)",
    security: "bearer",
    body: createBody,
    before: admin,
    responses: {
      201: { description: "Account created", schema: createdSchema },
      400: { description: "Input to correct (`errors`)" },
      403: { description: "Not an administrator" },
      409: { description: "The user name is taken" },
      502: { description: "Account created but the hook failed" },
    },
    handler: async ({ res, body }) => {
      const created = await adminCreateUser(ctx, { userName: body.userName, email: body.email ?? null, password: body.password ?? null });
      res.status(201).json(created);
    },
  });
  mountRoute(target, {
    method: "post",
    path: "/users/:userId/password",
    family: "auth",
    tag: "admin",
    summary: "Set (or generate) a user's password; revokes every local session first",
    security: "bearer",
    body: setBody,
    before: admin,
    responses: {
      204: { description: "Password set and delivered" },
      400: { description: "Input to correct, or no such user (`errors`)" },
      403: { description: "Not an administrator" },
      502: { description: "Password set, sessions revoked, but the hook failed" },
    },
    handler: async ({ res, body, params }) => {
      await adminSetPassword(ctx, { userId: params.userId ?? "", password: body.password ?? null });
      res.status(204).end();
    },
  });
}
