/**
 * `GET /sessions/{session_id}/evidence`, `GET /sessions/{session_id}/evidence/{name}` and
 * `POST /sessions/{session_id}/evidence` (a screenshot of the live page now), issue #16.
 */
import { createReadStream } from "node:fs";
import { z } from "zod";
import { AppError } from "../../http/errors.ts";
import { mountRoute } from "../../http/route.ts";
import type { BotRouteDeps } from "../context.ts";
import { evidenceDirOf } from "../paths.ts";
import { isFinal } from "../session-repo.ts";
import { contentTypeOf, evidencePath, listEvidence } from "./files.ts";
import { sessionOr404 } from "../routes/session-or-404.ts";

const fileSchema = z.object({ name: z.string(), bytes: z.number().int(), created_at: z.string() });


export function evidenceRoutes({ target, config, repo, supervisor, auth }: BotRouteDeps): void {
  const dirOf = (id: string) => evidenceDirOf(config.bot.RECORDINGS_DIR, id);

  mountRoute(target, {
    method: "get",
    path: "/sessions/:session_id/evidence",
    family: "bot",
    tag: "bot",
    summary: "The session's evidence files (screenshots, redacted page HTML, console, steps.json)",
    security: "botToken",
    before: [auth],
    responses: { 200: { description: "the files", schema: z.object({ files: z.array(fileSchema) }) }, 401: { description: "missing or wrong token" }, 404: { description: "unknown session" } },
    handler: async ({ params, res }) => {
      const id = params.session_id ?? "";
      await sessionOr404(repo, id);
      res.json({ files: await listEvidence(dirOf(id)) });
    },
  });

  mountRoute(target, {
    method: "get",
    path: "/sessions/:session_id/evidence/:name",
    family: "bot",
    tag: "bot",
    summary: "One evidence file, with its content type (image/png, text/html, application/json, text/plain)",
    security: "botToken",
    before: [auth],
    responses: { 200: { description: "the file" }, 401: { description: "missing or wrong token" }, 404: { description: "unknown session or file" } },
    handler: async ({ params, res }) => {
      const id = params.session_id ?? "";
      await sessionOr404(repo, id);
      const path = await evidencePath(dirOf(id), params.name ?? "");
      if (!path) throw new AppError("not_found", { message: "Evidence file not found." });
      res.status(200);
      res.setHeader("Content-Type", contentTypeOf(path));
      res.setHeader("X-Content-Type-Options", "nosniff");
      // A captured page must never run in the API's origin: no script, no request, no form.
      res.setHeader("Content-Security-Policy", "sandbox; default-src 'none'; img-src data:; style-src 'unsafe-inline'");
      res.setHeader("Cache-Control", "no-store");
      await new Promise<void>((resolve, reject) => {
        const stream = createReadStream(path);
        stream.on("error", reject);
        res.on("finish", () => resolve());
        res.on("close", () => resolve());
        stream.pipe(res);
      });
    },
  });

  mountRoute(target, {
    method: "post",
    path: "/sessions/:session_id/evidence",
    family: "bot",
    tag: "bot",
    summary: "Screenshot the running bot's page now; answers the new file's name",
    security: "botToken",
    before: [auth],
    responses: {
      200: { description: "the new screenshot", schema: fileSchema },
      401: { description: "missing or wrong token" },
      404: { description: "unknown session" },
      409: { description: "the session is not running, or its page cannot be captured now" },
    },
    handler: async ({ params, res }) => {
      const id = params.session_id ?? "";
      const row = await sessionOr404(repo, id);
      if (isFinal(row.status) || !supervisor.get(id)) throw new AppError("conflict", { message: "The session is not running; its evidence is listed at GET /sessions/{session_id}/evidence." });
      const answer = await supervisor.request(id, "evidence.capture", {});
      if (!answer.ok) throw new AppError("conflict", { message: answer.error?.message ?? "The page could not be captured now." });
      res.json(fileSchema.parse(answer.result));
    },
  });
}
