/**
 * `GET /sessions/{session_id}/timeline` (issue #17, decisions.md "Additions"): the speaker
 * timeline so far while the session runs (built from the worker's timeline journal, offsets on
 * the clock the trimmed recording will have), the stored one once it has ended.
 */
import { readFile } from "node:fs/promises";
import { AppError } from "../../http/errors.ts";
import { mountRoute } from "../../http/route.ts";
import { buildTimeline, readTimelineJournal, timelineSchema, type Timeline } from "../../../shared/timeline/index.ts";
import type { BotRouteDeps } from "../context.ts";
import { sessionPaths, timelineCacheDirOf } from "../paths.ts";
import { isFinal } from "../session-repo.ts";
import { timelineCachePath } from "../timeline/store-timeline.ts";
import { sessionOr404 } from "./session-or-404.ts";

export function timelineRoute({ target, repo, auth, config, now, cluster }: BotRouteDeps): void {
  const recordingsDir = config.bot.RECORDINGS_DIR;
  mountRoute(target, {
    method: "get",
    path: "/sessions/:session_id/timeline",
    family: "bot",
    tag: "bot",
    summary: "Who was there and who spoke when: live while the session runs, the stored file after",
    security: "botToken",
    before: [auth],
    responses: {
      200: { description: "the speaker timeline (offsets in seconds from the recording's first sample)", schema: timelineSchema },
      401: { description: "missing or wrong token" },
      404: { description: "unknown session, or a finished session that has no timeline (never admitted)" },
      503: { description: "cluster mode: the timeline is kept by another instance, which cannot be reached now" },
    },
    handler: async ({ params, res }) => {
      const row = await sessionOr404(repo, params.session_id);
      let timeline: Timeline | null;
      if (isFinal(row.status)) {
        timeline = await readStored(timelineCachePath(timelineCacheDirOf(recordingsDir), row.id));
        if (!timeline && row.timelineFile && cluster && row.instanceId && row.instanceId !== cluster.settings.instanceId) {
          // Its copy is on the instance that ran it (the forwarding found that one down).
          throw new AppError("service_unavailable", {
            message: `This session's timeline is kept by instance ${row.instanceId}, which cannot be reached now; it is also stored as ${row.timelineFile}.`,
            headers: { "Retry-After": "30" },
          });
        }
        if (!timeline) throw new AppError("not_found", { message: "This session has no timeline: the bot was never in the call." });
      } else {
        const records = await readTimelineJournal(sessionPaths(recordingsDir, row.id, row.recordingFormat === "flac" ? "flac" : "wav").timeline);
        timeline = buildTimeline({ sessionId: row.id, reference: row.reference, recordingFile: null, records, mode: "live", now: now().getTime() });
      }
      res.set("Cache-Control", "no-store").json(timeline);
    },
  });
}

async function readStored(path: string): Promise<Timeline | null> {
  try {
    return timelineSchema.parse(JSON.parse(await readFile(path, "utf8")));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
}
