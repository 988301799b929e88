/**
 * `POST /join`: one bot per call, except that a `reference` held by an active session returns
 * that session (recorder-bot.md rule 4); the unique index on `activeReference` settles races.
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { AppError } from "../../http/errors.ts";
import { mountRoute } from "../../http/route.ts";
import { normalizeMeetingUrl } from "../../../worker/teams/url.ts";
import type { BotRouteDeps } from "../context.ts";
import { sessionSummarySchema, summaryView } from "../session-view.ts";

/** A client whose join hit the limit may retry once a session has ended; a minute is typical. */
const RETRY_AFTER_SECONDS = 30;

export function joinBodySchema(allowedHosts: readonly string[], defaultName: string) {
  return z.object({
    meeting_url: z
      .string()
      .min(1)
      .transform((raw, ctx) => {
        const result = normalizeMeetingUrl(raw, [...allowedHosts]);
        if ("error" in result) {
          ctx.addIssue({ code: "custom", message: result.error });
          return z.NEVER;
        }
        // Echoed as the caller sent it (recorder-bot.md "meeting_url: the meeting join link");
        // the worker adds the web-client parameters when it opens the page (webJoinUrl).
        return raw.trim();
      }),
    display_name: z.string().trim().min(1).max(100).default(defaultName),
    reference: z.string().max(200).nullable().optional(),
    record: z.boolean().default(true),
  });
}

const joinResponseSchema = z.object({ success: z.boolean(), message: z.string(), session: sessionSummarySchema });

export function joinRoute({ target, config, repo, supervisor, auth, now }: BotRouteDeps): void {
  mountRoute(target, {
    method: "post",
    path: "/join",
    family: "bot",
    tag: "bot",
    summary: "Send a bot into a Teams meeting",
    security: "botToken",
    before: [auth],
    body: joinBodySchema(config.bot.MEETING_ALLOWED_HOSTS, config.bot.BOT_DISPLAY_NAME),
    responses: {
      200: { description: "the new session, or the active one holding the same reference", schema: joinResponseSchema },
      401: { description: "missing or wrong BOT_ACCESS_TOKEN" },
      422: { description: "invalid body" },
      503: { description: "MAX_CONCURRENT_SESSIONS sessions are running; see Retry-After" },
    },
    handler: async ({ body, res }) => {
      const reference = body.reference ?? null;
      const existingMessage = "An active session with this reference already exists; no new bot was sent.";
      if (reference !== null) {
        const existing = await repo.findActiveByReference(reference);
        if (existing) return void res.json({ success: true, message: existingMessage, session: summaryView(existing) });
      }
      if (!supervisor.reserve()) {
        throw new AppError("service_unavailable", {
          message: `${config.bot.MAX_CONCURRENT_SESSIONS} sessions are already running (MAX_CONCURRENT_SESSIONS); try again later.`,
          headers: { "Retry-After": String(RETRY_AFTER_SECONDS) },
        });
      }
      let launched = false;
      try {
        const outcome = await repo.create({
          id: randomUUID(),
          meetingUrl: body.meeting_url,
          reference,
          displayName: body.display_name,
          record: body.record,
          format: config.bot.RECORDING_FORMAT,
          createdAt: now(),
        });
        if (!outcome.created) return void res.json({ success: true, message: existingMessage, session: summaryView(outcome.row) });
        launched = true;
        await supervisor.launch(outcome.row);
        res.json({ success: true, message: "The bot is joining the meeting.", session: summaryView(outcome.row) });
      } finally {
        if (!launched) supervisor.release();
      }
    },
  });
}
