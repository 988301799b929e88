/**
 * `/healthz` says the process is alive; `/readyz` says whether it can serve: the database and
 * each feature's own dependencies (PulseAudio and Chromium for the bot, a remote store), as a
 * whole and per part (`/readyz/auth`, `/readyz/bot`).
 */
import { Router } from "express";
import { z } from "zod";
import { AppError } from "../http/errors.ts";
import { mountRoute, type MountedRouter } from "../http/route.ts";
import type { Feature } from "./feature.ts";
import type { Problems, Readiness } from "./readiness.ts";

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

/**
 * `/readyz` asks the whole app (every part); `/readyz/{part}` one part (control/app/readiness.ts),
 * so the factory mounts them once every feature is in.
 */
export function mountReadiness(target: MountedRouter, readiness: Readiness): void {
  mountRoute(target, {
    method: "get",
    path: "/readyz",
    family: "bot",
    tag: "service",
    summary: "Readiness of the whole service: database, PulseAudio, Chromium and storage usable, not shutting down",
    responses: {
      200: { description: "ready", schema: readySchema },
      503: { description: "not ready; `problems` names what is wrong, `parts` which part it affects", schema: readySchema },
    },
    handler: async ({ res }) => {
      const report = await readiness.check();
      const parts = Object.fromEntries(Object.entries(report.parts).map(([name, problems]) => [name, verdict(problems)]));
      const whole = verdict(report.problems);
      res.status(whole.status === "ready" ? 200 : 503).json({ ...whole, parts });
    },
  });
  mountRoute(target, {
    method: "get",
    path: "/readyz/:part",
    family: "bot",
    tag: "service",
    summary: `Readiness of one part (${readiness.parts.join(", ")}): auth needs only the database, so a recorder dependency cannot take sign-in out of rotation`,
    responses: {
      200: { description: "ready", schema: partSchema },
      404: { description: "no such part" },
      503: { description: "not ready; `problems` names what is wrong", schema: partSchema },
    },
    handler: async ({ res, params }) => {
      if (!readiness.parts.includes(params.part ?? "")) throw new AppError("not_found", { message: `No readiness part "${params.part}"; parts: ${readiness.parts.join(", ")}.` });
      const part = verdict((await readiness.check()).parts[params.part!] ?? {});
      res.status(part.status === "ready" ? 200 : 503).json(part);
    },
  });
}

function verdict(problems: Problems): { status: "ready" | "not_ready"; problems: Problems } {
  return { status: Object.keys(problems).length === 0 ? "ready" : "not_ready", problems };
}

const partSchema = z.object({ status: z.enum(["ready", "not_ready"]), problems: z.record(z.string(), z.string()) });
const readySchema = partSchema.extend({ parts: z.record(z.string(), partSchema) });
