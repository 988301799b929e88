/**
 * The wire shape of a session (recorder-bot.md "Session" + decisions.md "Bot API decisions"):
 * one function, so status, list, stop and join answer the same field names.
 */
import type { BotSession } from "../../prisma/generated/sqlite/client.ts";
import { z } from "zod";
import { endReasonSchema, sessionStatusSchema } from "../../shared/journal/records.ts";

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

export function sessionView(row: BotSession, now: Date = new Date()): SessionView {
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
    recording_bytes: row.recordingBytes,
    participant_count: row.participantCount,
  };
}
