/**
 * {prefix}{SessionEndpointPrefix}: list and revoke the caller's sessions. Unknown and foreign ids
 * both answer 404 (Account rule 15), so ids of other people's sessions cannot be probed. Each
 * revoked family emits one `session-revoked` audit event with reason `revoked-by-user`.
 */
import { z } from "zod";
import { fail } from "../../http/errors.ts";
import { mountRoute } from "../../http/route.ts";
import { principalOf, requireBearer } from "../bearer/index.ts";
import type { AuthRouteDeps } from "../feature.ts";
import { normalisePrefix } from "./prefix.ts";
import { listSessions } from "../sessions/list.ts";
import { revokeFamily, revokeUserFamilies } from "../sessions/revoke.ts";

const REASON = "revoked-by-user";

const summary = z.object({
  id: z.string(),
  userAgent: z.string(),
  ipAddress: z.string(),
  createdAt: z.string(),
  lastUsedAt: z.string(),
  expiresAt: z.string(),
  authenticationMethods: z.array(z.string()),
  isCurrent: z.boolean(),
});

export function sessionRoutes({ ctx, target }: AuthRouteDeps): void {
  const base = normalisePrefix(ctx.config.LocalLogin.SessionEndpointPrefix);
  const bearer = requireBearer(ctx);

  mountRoute(target, {
    method: "get",
    path: base,
    family: "auth",
    tag: "sessions",
    summary: "List the caller's live sessions",
    security: "bearer",
    before: [bearer],
    responses: { 200: { description: "Session summaries", schema: z.array(summary) } },
    handler: async ({ req, res }) => {
      const principal = principalOf(req);
      res.json(await listSessions(ctx, principal.userId, principal.sessionId));
    },
  });

  mountRoute(target, {
    method: "delete",
    path: `${base}/:id`,
    family: "auth",
    tag: "sessions",
    summary: "Revoke one of the caller's sessions",
    security: "bearer",
    before: [bearer],
    responses: { 204: { description: "Revoked" }, 404: { description: "No such session of the caller" } },
    handler: async ({ req, res, params }) => {
      const { userId } = principalOf(req);
      const familyId = params.id ?? "";
      if (!(await revokeFamily(ctx, { familyId, userId, reason: REASON }))) throw fail.notFound();
      ctx.audit({ audit: "session-revoked", userId, familyId, reason: REASON });
      res.status(204).end();
    },
  });

  mountRoute(target, {
    method: "delete",
    path: base,
    family: "auth",
    tag: "sessions",
    summary: "Revoke every session of the caller except the one making the request",
    security: "bearer",
    before: [bearer],
    responses: { 204: { description: "Revoked" } },
    handler: async ({ req, res }) => {
      const { userId, sessionId } = principalOf(req);
      // An external token has no session here (Account rule 17): nothing is kept.
      const revoked = await revokeUserFamilies(ctx, { userId, reason: REASON, keep: sessionId });
      for (const familyId of revoked) ctx.audit({ audit: "session-revoked", userId, familyId, reason: REASON });
      res.status(204).end();
    },
  });
}
