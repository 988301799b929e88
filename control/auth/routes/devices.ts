/**
 * {prefix}{TrustedDevices:EndpointPrefix}: list and revoke the caller's trusted devices. Unknown
 * and foreign ids both answer 404 (Account rule 15), so other people's device ids cannot be
 * probed. The device token is read from `X-Toamaisutaa-Device` only to mark the current entry.
 */
import { z } from "zod";
import { fail } from "../../http/errors.ts";
import { mountRoute } from "../../http/route.ts";
import { principalOf, requireBearer } from "../bearer/index.ts";
import { listDevices, revokeAllDevices, revokeOwnDevice } from "../devices/list.ts";
import type { AuthRouteDeps } from "../feature.ts";
import { DEVICE_HEADER } from "../twofactor/gate.ts";
import { normalisePrefix } from "./prefix.ts";

const summary = z.object({
  id: z.string(),
  label: z.string(),
  userAgent: z.string(),
  ipAddress: z.string(),
  createdAt: z.string(),
  lastUsedAt: z.string(),
  expiresAt: z.string(),
  isCurrent: z.boolean(),
});

export function deviceRoutes({ ctx, target }: AuthRouteDeps): void {
  if (!ctx.config.TrustedDevices.Enabled) return;
  const base = normalisePrefix(ctx.config.TrustedDevices.EndpointPrefix);
  const bearer = requireBearer(ctx);

  mountRoute(target, {
    method: "get",
    path: base,
    family: "auth",
    tag: "devices",
    summary: "List the caller's trusted devices (send X-Toamaisutaa-Device to mark the current one)",
    security: "bearer",
    before: [bearer],
    responses: { 200: { description: "Device summaries", schema: z.array(summary) } },
    handler: async ({ req, res }) => {
      const header = req.get(DEVICE_HEADER);
      res.json(await listDevices(ctx, principalOf(req).userId, header !== undefined && header !== "" ? header : null));
    },
  });

  mountRoute(target, {
    method: "delete",
    path: `${base}/:id`,
    family: "auth",
    tag: "devices",
    summary: "Stop trusting one of the caller's devices",
    security: "bearer",
    before: [bearer],
    responses: { 204: { description: "Revoked" }, 404: { description: "No such device of the caller" } },
    handler: async ({ req, res, params }) => {
      if (!(await revokeOwnDevice(ctx, principalOf(req).userId, params.id ?? ""))) throw fail.notFound();
      res.status(204).end();
    },
  });

  mountRoute(target, {
    method: "delete",
    path: base,
    family: "auth",
    tag: "devices",
    summary: "Stop trusting every device of the caller",
    security: "bearer",
    before: [bearer],
    responses: { 204: { description: "Revoked" } },
    handler: async ({ req, res }) => {
      await revokeAllDevices(ctx, principalOf(req).userId, "revoked-by-user");
      res.status(204).end();
    },
  });
}
