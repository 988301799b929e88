/** `GET /status/{id}`, `POST /stop/{id}` and `GET /sessions` (decisions.md "Bot API decisions"). */
import { z } from "zod";
import { AppError } from "../../http/errors.ts";
import { mountRoute } from "../../http/route.ts";
import { sessionStatusSchema } from "../../../shared/journal/records.ts";
import type { BotRouteDeps } from "../context.ts";
import { isFinal } from "../session-repo.ts";
import { sessionSchema, sessionView, type SessionView } from "../session-view.ts";

/** A stop answers once the bot has left and the file is stored, when that is quick. */
const STOP_WAIT_MS = 20_000;

const notFound = (): AppError => new AppError("not_found", { message: "Session not found." });

/**
 * decisions.md: stop "answers 200 with the session", and recorder-bot.md rule 5 echoes
 * `reference` on stop. The session's fields sit at the top level (the body *is* the session),
 * and `success`, `message` and `session` repeat the join response's envelope, so a client written
 * against either reading finds what it looks for.
 */
const stopResponseSchema = sessionSchema.extend({ success: z.boolean(), message: z.string(), session: sessionSchema });

function stopBody(view: SessionView, message: string): z.infer<typeof stopResponseSchema> {
  return { ...view, success: true, message, session: view };
}

export function sessionRoutes({ target, repo, supervisor, auth, now }: BotRouteDeps): void {
  mountRoute(target, {
    method: "get",
    path: "/status/:session_id",
    family: "bot",
    tag: "bot",
    summary: "A session's status and outcome",
    security: "botToken",
    before: [auth],
    responses: { 200: { description: "the session", schema: sessionSchema }, 401: { description: "missing or wrong token" }, 404: { description: "unknown session" } },
    handler: async ({ params, res }) => {
      const row = await repo.find(params.session_id ?? "");
      if (!row) throw notFound();
      res.json(sessionView(row, now()));
    },
  });

  mountRoute(target, {
    method: "post",
    path: "/stop/:session_id",
    family: "bot",
    tag: "bot",
    summary: "Make the bot leave and store the recording now",
    security: "botToken",
    before: [auth],
    responses: {
      200: { description: "the session (already finished, or after it ended), also wrapped as in the join response", schema: stopResponseSchema },
      401: { description: "missing or wrong token" },
      404: { description: "unknown session" },
    },
    handler: async ({ params, res }) => {
      const id = params.session_id ?? "";
      const row = await repo.find(id);
      if (!row) throw notFound();
      if (isFinal(row.status)) return void res.json(stopBody(sessionView(row, now()), "The session has already finished."));
      await supervisor.stop(id, STOP_WAIT_MS);
      const after = (await repo.find(id)) ?? row;
      const message = isFinal(after.status) ? "The session was stopped." : "The bot is leaving the meeting.";
      res.json(stopBody(sessionView(after, now()), message));
    },
  });

  mountRoute(target, {
    method: "get",
    path: "/sessions",
    family: "bot",
    tag: "bot",
    summary: "Sessions, newest first",
    security: "botToken",
    before: [auth],
    query: z.object({ status: sessionStatusSchema.optional(), reference: z.string().max(200).optional() }),
    responses: { 200: { description: "sessions", schema: z.object({ sessions: z.array(sessionSchema) }) }, 401: { description: "missing or wrong token" }, 422: { description: "bad filter" } },
    handler: async ({ query, res }) => {
      const rows = await repo.list(query);
      res.json({ sessions: rows.map((r) => sessionView(r, now())) });
    },
  });
}
