/**
 * The wire shape of a session (recorder-bot.md "Session" + decisions.md "Bot API decisions"):
 * one function, so status, list, stop and join answer the same field names.
 */
import type { BotSession } from "../../prisma/generated/sqlite/client.ts";
import { z } from "zod";
import { endReasonSchema, sessionStatusSchema, type SessionStatus } from "../../shared/journal/records.ts";
import { FINAL_STATUSES } from "../../shared/ipc/messages.ts";
import { errorCodeSchema } from "../../shared/recording/error-codes.ts";
import { automaticLeaveSchema, type AutomaticLeave } from "../../shared/session/automatic-leave.ts";

export const sessionSummarySchema = z.object({
  session_id: z.string(),
  meeting_url: z.string(),
  reference: z.string().nullable(),
  display_name: z.string(),
  status: sessionStatusSchema,
  record: z.boolean(),
});

export const sessionSchema = sessionSummarySchema.extend({
  recording_file: z.string().nullable(),
  error_message: z.string().nullable(),
  created_at: z.string(),
  joined_at: z.string().nullable(),
  ended_at: z.string().nullable(),
  duration_seconds: z.number().nullable(),
  end_reason: endReasonSchema.nullable(),
  recording_format: z.enum(["wav", "flac"]),
  recording_bytes: z.number().int().nullable(),
  participant_count: z.number().int().nullable(),
  /** The bot has left; its recording is still being stored (the store is slow or down). */
  recording_pending: z.boolean(),
  /** #16: closed list (README "Error codes"), set with status `error`, null otherwise. */
  error_code: errorCodeSchema.nullable(),
  /** #16: the `/join` request's automatic_leave as sent, null when it sent none. */
  automatic_leave: automaticLeaveSchema.nullable(),
  /** The instance that runs (or ran) the session in cluster mode; null on a single instance (#19). */
  instance_id: z.string().nullable(),
  /** Where the speaker timeline was stored (issue #17), as for recording_file; null until then. */
  timeline_file: z.string().nullable(),
});
export type SessionView = z.infer<typeof sessionSchema>;

export function summaryView(row: BotSession): z.infer<typeof sessionSummarySchema> {
  return {
    session_id: row.id,
    meeting_url: row.meetingUrl,
    reference: row.reference,
    display_name: row.displayName,
    status: sessionStatusSchema.parse(row.status),
    record: row.record,
  };
}

/** `pending`: the bot has left and its recording is still being stored (recording_pending). */
export function sessionView(row: BotSession, now: Date = new Date(), pending = false): SessionView {
  // Duration is time in the meeting: from admission to leaving (or to now while it runs).
  const end = row.endedAt ?? (row.joinedAt ? now : null);
  const duration = row.joinedAt && end ? Math.max(0, (end.getTime() - row.joinedAt.getTime()) / 1000) : null;
  return {
    ...summaryView(row),
    recording_file: row.recordingFile,
    error_message: row.errorMessage,
    created_at: row.createdAt.toISOString(),
    joined_at: row.joinedAt?.toISOString() ?? null,
    ended_at: row.endedAt?.toISOString() ?? null,
    duration_seconds: duration === null ? null : Math.round(duration * 1000) / 1000,
    end_reason: row.endReason === null ? null : endReasonSchema.parse(row.endReason),
    recording_format: row.recordingFormat === "flac" ? "flac" : "wav",
    // BIGINT in the database, a JSON number here (exact up to 2^53 bytes).
    recording_bytes: row.recordingBytes === null ? null : Number(row.recordingBytes),
    participant_count: row.participantCount,
    recording_pending: pending && !FINAL_STATUSES.has(row.status as SessionStatus),
    error_code: row.status === "error" ? (errorCodeSchema.safeParse(row.errorCode).data ?? "internal") : null,
    automatic_leave: automaticLeaveOf(row),
    instance_id: row.instanceId,
    timeline_file: row.timelineFile,
  };
}

/** The stored automatic_leave (JSON text), null when none or unreadable. */
export function automaticLeaveOf(row: Pick<BotSession, "automaticLeave">): AutomaticLeave | null {
  if (!row.automaticLeave) return null;
  try {
    return automaticLeaveSchema.parse(JSON.parse(row.automaticLeave));
  } catch {
    return null;
  }
}
