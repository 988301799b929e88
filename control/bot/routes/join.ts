/**
 * `POST /join`: one bot per call, except that a `reference` held by an active session returns
 * that session (recorder-bot.md rule 4); the unique index on `activeReference` settles races.
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { AppError } from "../../http/errors.ts";
import { ReferenceLock } from "../reference-lock.ts";
import { mountRoute } from "../../http/route.ts";
import { normalizeMeetingUrl } from "../../../worker/teams/url.ts";
import { automaticLeaveSchema, type AutomaticLeave } from "../../../shared/session/automatic-leave.ts";
import type { BotRouteDeps } from "../context.ts";
import { sessionSummarySchema, summaryView } from "../session-view.ts";
import { checkNewSession } from "../disk/space.ts";
import { metrics } from "../../metrics/index.ts";
import type { NewSession } from "../session-repo.ts";
import type { RecordingFormat } from "../../../shared/journal/records.ts";

/** A client whose join hit the limit may retry once a session has ended; a minute is typical. */
const RETRY_AFTER_SECONDS = 30;

export function joinBodySchema(allowedHosts: readonly string[], defaultName: string, maxRecordingMinutes = Number.MAX_SAFE_INTEGER) {
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
    /** #16: per-session leave rules over the service defaults. */
    automatic_leave: automaticLeaveSchema
      .superRefine((a, ctx) => {
        if (a.max_duration_minutes !== undefined && a.max_duration_minutes > maxRecordingMinutes) {
          ctx.addIssue({ code: "custom", path: ["max_duration_minutes"], message: `must not exceed MAX_RECORDING_MINUTES (${maxRecordingMinutes})` });
        }
      })
      .nullable()
      .optional(),
  });
}

const joinResponseSchema = z.object({ success: z.boolean(), message: z.string(), session: sessionSummarySchema });

export function joinRoute({ target, config, repo, supervisor, auth, now, cluster }: BotRouteDeps): void {
  const joins = new ReferenceLock();
  mountRoute(target, {
    method: "post",
    path: "/join",
    family: "bot",
    tag: "bot",
    summary: "Send a bot into a Teams meeting",
    security: "botToken",
    before: [auth],
    body: joinBodySchema(config.bot.MEETING_ALLOWED_HOSTS, config.bot.BOT_DISPLAY_NAME, config.bot.MAX_RECORDING_MINUTES),
    responses: {
      200: { description: "the new session, or the active one holding the same reference", schema: joinResponseSchema },
      401: { description: "missing or wrong BOT_ACCESS_TOKEN" },
      422: { description: "invalid body" },
      503: { description: "MAX_CONCURRENT_SESSIONS sessions are running (in cluster mode: on every instance); see Retry-After" },
      507: { description: "RECORDINGS_DIR cannot hold this session's worst case beside the running ones and MIN_FREE_DISK_MB (in cluster mode: on any instance with a free slot)" },
    },
    handler: ({ body, res }) => joins.run(body.reference ?? null, async () => {
      const reference = body.reference ?? null;
      const existingMessage = "An active session with this reference already exists; no new bot was sent.";
      if (reference !== null) {
        const existing = await repo.findActiveByReference(reference);
        if (existing) return void res.json({ success: true, message: existingMessage, session: summaryView(existing) });
      }
      if (cluster) {
        // Cluster mode (#19): the session and its placement job; an instance with a free slot and
        // room on disk takes it. The slot and disk gates (503, 507) are the cluster's, not this
        // instance's: the session may run elsewhere (control/cluster/placement.ts).
        const outcome = await cluster.admit(newSession(body, reference, config.bot.RECORDING_FORMAT, now()));
        const message = outcome.created ? "The bot is joining the meeting." : existingMessage;
        return void res.json({ success: true, message, session: summaryView(outcome.row) });
      }
      if (!supervisor.reserve()) {
        metrics.joinRefused();
        throw new AppError("service_unavailable", {
          message: `${config.bot.MAX_CONCURRENT_SESSIONS} sessions are already running (MAX_CONCURRENT_SESSIONS); try again later.`,
          headers: { "Retry-After": String(RETRY_AFTER_SECONDS) },
        });
      }
      // A warm worker, when the pool has one, names the session (control/bot/warm-pool/pool.ts).
      const lease = supervisor.acquireWarm();
      let launched = false;
      try {
        const disk = await checkNewSession(
          { recordingsDir: config.bot.RECORDINGS_DIR, minFreeMb: config.bot.MIN_FREE_DISK_MB, limits: { maxRecordingMinutes: config.bot.MAX_RECORDING_MINUTES, lobbyWaitMinutes: config.bot.MEETING_WAIT_FOR_LOBBY } },
          { format: config.bot.RECORDING_FORMAT, record: body.record },
          supervisor.recordings(),
        );
        if (!disk.ok) throw new AppError("insufficient_storage", { message: disk.detail });
        const outcome = await repo.create({ ...newSession(body, reference, config.bot.RECORDING_FORMAT, now()), ...(lease ? { id: lease.id } : {}) });
        if (!outcome.created) return void res.json({ success: true, message: existingMessage, session: summaryView(outcome.row) });
        launched = true;
        await supervisor.launch(outcome.row, lease);
        res.json({ success: true, message: "The bot is joining the meeting.", session: summaryView(outcome.row) });
      } finally {
        if (!launched) {
          supervisor.release();
          lease?.giveBack();
        }
      }
    }),
  });
}

/** The row a join writes, on one instance or in a cluster alike. */
function newSession(body: { meeting_url: string; display_name: string; record: boolean; automatic_leave?: AutomaticLeave | null | undefined }, reference: string | null, format: RecordingFormat, createdAt: Date): NewSession {
  return { id: randomUUID(), meetingUrl: body.meeting_url, reference, displayName: body.display_name, record: body.record, format, createdAt, automaticLeave: body.automatic_leave ?? null };
}
