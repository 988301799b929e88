import { z } from "zod";
import { PACKAGE } from "../../app/docs.ts";
import { mountRoute } from "../../http/route.ts";
import type { BotRouteDeps } from "../context.ts";

const rootSchema = z.object({ name: z.string(), version: z.string(), status: z.literal("ok"), active_sessions: z.number().int() });

/** `GET /`: open to everyone (decisions.md "Access"), like a health probe with a count. */
export function rootRoute({ target, supervisor, cluster }: BotRouteDeps): void {
  mountRoute(target, {
    method: "get",
    path: "/",
    family: "bot",
    tag: "bot",
    summary: "Service name, version and number of running sessions",
    responses: { 200: { description: "summary", schema: rootSchema } },
    // In cluster mode the count is the whole cluster's, from the database (#19).
    handler: async ({ res }) => {
      const active = cluster ? await cluster.activeSessions() : supervisor.activeCount();
      res.json({ name: PACKAGE.name, version: PACKAGE.version, status: "ok", active_sessions: active });
    },
  });
}
