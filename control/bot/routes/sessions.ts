/** `GET /status/{id}`, `POST /stop/{id}` and `GET /sessions` (decisions.md "Bot API decisions"). */
import { z } from "zod";
import { AppError } from "../../http/errors.ts";
import { mountRoute } from "../../http/route.ts";
import { sessionStatusSchema } from "../../../shared/journal/records.ts";
import type { BotRouteDeps } from "../context.ts";
import { isFinal } from "../session-repo.ts";
import { sessionSchema, sessionView, type SessionView } from "../session-view.ts";
import { sessionOr404 } from "./session-or-404.ts";

/** A stop answers once the bot has left and the file is stored, when that is quick. */
const STOP_WAIT_MS = 20_000;

/** `GET /sessions` pages: the list stays bounded however many sessions the database holds. */
const DEFAULT_PAGE = 100;
const MAX_PAGE = 1000;

/** The cursor is opaque to clients: base64url of the last row's createdAt and id. */
function encodeCursor(row: { createdAt: Date; id: string }): string {
  return Buffer.from(`${row.createdAt.toISOString()}|${row.id}`).toString("base64url");
}

function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  const [at, id] = Buffer.from(cursor, "base64url").toString("utf8").split("|");
  const createdAt = new Date(at ?? "");
  if (!id || Number.isNaN(createdAt.getTime())) {
    throw new AppError("validation_failed", { items: [{ loc: ["query", "cursor"], msg: "not a cursor this service returned", type: "value_error" }] });
  }
  return { createdAt, id };
}


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
      const row = await sessionOr404(repo, params.session_id);
      res.json(sessionView(row, now(), supervisor.pending(row.id)));
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
      const row = await sessionOr404(repo, id);
      if (isFinal(row.status)) return void res.json(stopBody(sessionView(row, now()), "The session has already finished."));
      await supervisor.stop(id, STOP_WAIT_MS);
      const after = (await repo.find(id)) ?? row;
      const message = isFinal(after.status) ? "The session was stopped." : "The bot is leaving the meeting.";
      res.json(stopBody(sessionView(after, now(), supervisor.pending(id)), message));
    },
  });

  mountRoute(target, {
    method: "get",
    path: "/sessions",
    family: "bot",
    tag: "bot",
    summary: "Sessions, newest first, in pages (`limit`, then `cursor` = the previous page's `next_cursor`)",
    security: "botToken",
    before: [auth],
    query: z.object({
      status: sessionStatusSchema.optional(),
      reference: z.string().max(200).optional(),
      limit: z.coerce.number().int().min(1).max(MAX_PAGE).default(DEFAULT_PAGE),
      cursor: z.string().max(200).optional(),
    }),
    responses: {
      200: { description: "one page of sessions; `next_cursor` is null on the last page", schema: z.object({ sessions: z.array(sessionSchema), next_cursor: z.string().nullable() }) },
      401: { description: "missing or wrong token" },
      422: { description: "bad filter, limit or cursor" },
    },
    handler: async ({ query, res }) => {
      const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
      // One more than asked tells whether another page follows.
      const rows = await repo.list({ status: query.status, reference: query.reference }, { limit: query.limit + 1, after });
      const page = rows.slice(0, query.limit);
      const last = page.at(-1);
      res.json({
        sessions: page.map((r) => sessionView(r, now(), supervisor.pending(r.id))),
        next_cursor: rows.length > query.limit && last ? encodeCursor(last) : null,
      });
    },
  });
}
