/**
 * `GET /metrics` in the Prometheus text format. Open unless METRICS_TOKEN is set; then it needs
 * `Authorization: Bearer <METRICS_TOKEN>` (decisions.md: not the bot token, so a scraper holds
 * no right to send bots).
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { Router, type RequestHandler } from "express";
import { AppError } from "../http/errors.ts";
import { mountRoute } from "../http/route.ts";
import type { Feature } from "../app/feature.ts";
import { registry } from "./registry.ts";

const digest = (value: string): Buffer => createHash("sha256").update(value, "utf8").digest();

function requireMetricsToken(token: string | undefined): RequestHandler {
  if (!token) return (_req, _res, next) => next();
  const expected = digest(token);
  return (req, _res, next) => {
    const match = /^Bearer\s+(.+)$/i.exec((req.headers.authorization ?? "").trim());
    if (match?.[1] && timingSafeEqual(digest(match[1]), expected)) return next();
    next(new AppError("invalid_token", { message: match ? "Invalid metrics token." : "Not authenticated: send Authorization: Bearer <METRICS_TOKEN>." }));
  };
}

export const metricsFeature: Feature = {
  name: "metrics",
  mount({ app, registry: docs, config }) {
    const router = Router();
    mountRoute(
      { router, prefix: "", registry: docs },
      {
        method: "get",
        path: "/metrics",
        family: "bot",
        tag: "service",
        summary: "Prometheus metrics (text format); needs `Authorization: Bearer <METRICS_TOKEN>` when that is set",
        before: [requireMetricsToken(config.server.METRICS_TOKEN)],
        responses: { 200: { description: "Prometheus text exposition format 0.0.4" }, 401: { description: "METRICS_TOKEN is set and was not sent" } },
        handler: async ({ res }) => {
          const text = await registry.metrics();
          res.type(registry.contentType).send(text);
        },
      },
    );
    app.use(router);
    return {};
  },
};
