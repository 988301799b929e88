/**
 * `/healthz` says the process is alive; `/readyz` says whether it can serve: the database and
 * each feature's own dependencies (PulseAudio and Chromium for the bot, a remote store).
 */
import { Router } from "express";
import { z } from "zod";
import { mountRoute, type MountedRouter } from "../http/route.ts";
import type { Feature } from "./feature.ts";

export const healthFeature: Feature = {
  name: "health",
  mount({ app, registry }) {
    const router = Router();
    const target = { router, prefix: "", registry };
    mountRoute(target, {
      method: "get",
      path: "/healthz",
      family: "bot",
      tag: "service",
      summary: "Liveness: the process answers",
      responses: { 200: { description: "alive", schema: z.object({ status: z.literal("ok") }) } },
      handler: ({ res }) => void res.json({ status: "ok" }),
    });
    app.use(router);
    return {};
  },
};

/** `/readyz` asks the whole app, so the factory mounts it once every feature is in. */
export function mountReadiness(target: MountedRouter, readiness: () => Promise<Record<string, string>>): void {
  mountRoute(target, {
    method: "get",
    path: "/readyz",
    family: "bot",
    tag: "service",
    summary: "Readiness: database, PulseAudio, Chromium and storage usable",
    responses: {
      200: { description: "ready", schema: readySchema },
      503: { description: "not ready; `problems` names what is wrong", schema: readySchema },
    },
    handler: async ({ res }) => {
      const problems = await readiness();
      const ok = Object.keys(problems).length === 0;
      res.status(ok ? 200 : 503).json({ status: ok ? "ready" : "not_ready", problems });
    },
  });
}

const readySchema = z.object({ status: z.enum(["ready", "not_ready"]), problems: z.record(z.string(), z.string()) });
