import { z } from "zod";

/** Session statuses of recorder-bot.md "States and transitions". */
export const sessionStatusSchema = z.enum([
  "joining",
  "lobby",
  "recording",
  "connected",
  "stopped",
  "denied",
  "not_admitted",
  "interrupted",
  "error",
]);
export type SessionStatus = z.infer<typeof sessionStatusSchema>;

/** Why a session ended (decisions.md "Bot API decisions"). */
export const endReasonSchema = z.enum([
  "alone",
  "removed",
  "max_duration",
  "stopped_by_api",
  "meeting_ended",
  "denied",
  "lobby_timeout",
  "error",
  "interrupted",
  // #16: automatic_leave rules of a /join
  "silence",
  "only_bots",
  /** Cluster mode (#19): the session's instance stopped answering; another instance marked it. */
  "instance_lost",
]);
export type EndReason = z.infer<typeof endReasonSchema>;

export const recordingFormatSchema = z.enum(["wav", "flac"]);
export type RecordingFormat = z.infer<typeof recordingFormatSchema>;

const isoTime = z.iso.datetime({ offset: true });

/** First record of every journal: enough to rebuild the session after a restart. */
export const sessionRecordSchema = z.object({
  type: z.literal("session"),
  session_id: z.string().min(1),
  meeting_url: z.string(),
  reference: z.string().nullable(),
  display_name: z.string(),
  record: z.boolean(),
  format: recordingFormatSchema,
  /** Null when `record` is false: nothing is captured. */
  recording_path: z.string().nullable(),
  created_at: isoTime,
});

export const statusRecordSchema = z.object({
  type: z.literal("status"),
  status: sessionStatusSchema,
  previous_status: sessionStatusSchema.nullable(),
  at: isoTime,
  end_reason: endReasonSchema.optional(),
  error_message: z.string().optional(),
  /** shared/recording/error-codes.ts, with status `error` (#16). */
  error_code: z.string().optional(),
});

export const recordingStartedRecordSchema = z.object({
  type: z.literal("recording_started"),
  path: z.string(),
  at: isoTime,
});

export const recordingClosedRecordSchema = z.object({
  type: z.literal("recording_closed"),
  path: z.string(),
  bytes: z.number().int().nonnegative(),
  at: isoTime,
});

/** Written by recovery after repairing a recording whose ffmpeg was killed. */
export const recordingRepairedRecordSchema = z.object({
  type: z.literal("recording_repaired"),
  path: z.string(),
  bytes: z.number().int().nonnegative(),
  duration_sec: z.number().nonnegative(),
  at: isoTime,
});

/**
 * Written by the worker when the bot gets into the call: where in the recording (seconds from its
 * first sample, measured on a monotonic clock) the admission was seen. Every path that keeps the
 * file (a clean stop, the crash path, a restart) trims its head from this (issue #15).
 */
export const admittedRecordSchema = z.object({
  type: z.literal("admitted"),
  /** Null when the session does not record. */
  recording_offset_sec: z.number().nonnegative().nullable(),
  at: isoTime,
});

/** The head up to the admission (less the margin) is gone from the file; never trimmed twice. */
export const recordingTrimmedRecordSchema = z.object({
  type: z.literal("recording_trimmed"),
  path: z.string(),
  offset_sec: z.number().nonnegative(),
  bytes: z.number().int().nonnegative(),
  at: isoTime,
});

/** Written before an upload starts, so a crash mid-upload knows where the file was going. */
export const uploadPendingRecordSchema = z.object({
  type: z.literal("upload_pending"),
  location: z.string(),
  at: isoTime,
});

export const storedRecordSchema = z.object({
  type: z.literal("stored"),
  location: z.string(),
  at: isoTime,
});

/** Last record: the session has its final status and its webhook has been enqueued. */
export const finishedRecordSchema = z.object({
  type: z.literal("finished"),
  status: sessionStatusSchema,
  end_reason: endReasonSchema,
  at: isoTime,
});

/**
 * Every record kind. New kinds are added here; readers of an older version skip kinds they do not
 * know (see readJournal) instead of treating them as damage.
 */
export const journalRecordSchema = z.discriminatedUnion("type", [
  sessionRecordSchema,
  statusRecordSchema,
  recordingStartedRecordSchema,
  recordingClosedRecordSchema,
  recordingRepairedRecordSchema,
  admittedRecordSchema,
  recordingTrimmedRecordSchema,
  uploadPendingRecordSchema,
  storedRecordSchema,
  finishedRecordSchema,
]);

export type JournalRecord = z.infer<typeof journalRecordSchema>;
export type SessionRecord = z.infer<typeof sessionRecordSchema>;
export type StatusRecord = z.infer<typeof statusRecordSchema>;
export type JournalRecordType = JournalRecord["type"];
