/**
 * The speaker timeline's own journal (`.sessions/<id>/timeline.journal`), written by the worker as
 * the meeting goes and read by the control plane for the live route, the stored file and crash
 * recovery. A file of its own, next to the session journal: a long meeting writes many speech
 * records, and the session journal stays the short list of status facts recovery reads.
 * Times are epoch milliseconds; offsets on the recording's clock are computed only when the
 * timeline is built, because where offset 0 lies is known for sure only at the end (the trim).
 */
import { z } from "zod";

const epochMs = z.number().nonnegative();

/**
 * Where the recording's clock starts. `opened_at`: ffmpeg opened its input (sample 0 of the
 * untrimmed file; null without a recording); `admitted_at`: the bot got into the call; `origin`:
 * the instant of the first sample of the file as it will be kept; `final` once the trim is done.
 */
export const clockRecordSchema = z.object({
  type: z.literal("clock"),
  opened_at: epochMs.nullable(),
  admitted_at: epochMs,
  origin: epochMs,
  final: z.boolean(),
});

/** A participant as known now (written on every change: the last one per id wins). */
export const participantRecordSchema = z.object({
  type: z.literal("participant"),
  id: z.string().min(1),
  name: z.string(),
  label: z.string().nullable(),
  self: z.boolean(),
  /** Null for those already there when the bot was admitted. */
  joined_at: epochMs.nullable(),
  left_at: epochMs.nullable(),
});

/** A turn begins; `key` pairs it with its end (one participant, or one unattributed source). */
export const speechStartRecordSchema = z.object({
  type: z.literal("speech_start"),
  key: z.string().min(1),
  participant_id: z.string().nullable(),
  at: epochMs,
});

export const speechEndRecordSchema = z.object({ type: z.literal("speech_end"), key: z.string().min(1), at: epochMs });

/** The observer was alive at `at`: after a crash, turns still open end here. */
export const aliveRecordSchema = z.object({ type: z.literal("alive"), at: epochMs });

export const timelineRecordSchema = z.discriminatedUnion("type", [
  clockRecordSchema,
  participantRecordSchema,
  speechStartRecordSchema,
  speechEndRecordSchema,
  aliveRecordSchema,
]);
export type TimelineRecord = z.infer<typeof timelineRecordSchema>;
export type ParticipantRecord = z.infer<typeof participantRecordSchema>;
export type ClockRecord = z.infer<typeof clockRecordSchema>;

/** The timeline file (issue #17), also the body of `GET /sessions/{id}/timeline`. */
export const timelineParticipantSchema = z.object({
  id: z.string(),
  name: z.string(),
  label: z.string().nullable(),
  self: z.boolean(),
  joined_at: z.number().nullable(),
  left_at: z.number().nullable(),
});
export const timelineSpeechSchema = z.object({
  participant_id: z.string().nullable(),
  start: z.number(),
  end: z.number(),
  overlap: z.boolean(),
});
export const timelineSchema = z.object({
  session_id: z.string(),
  reference: z.string().nullable(),
  recording_file: z.string().nullable(),
  started_at: z.string().nullable(),
  ended_at: z.string().nullable(),
  participants: z.array(timelineParticipantSchema),
  speech: z.array(timelineSpeechSchema),
});
export type Timeline = z.infer<typeof timelineSchema>;
export type TimelineParticipant = z.infer<typeof timelineParticipantSchema>;
export type TimelineSpeech = z.infer<typeof timelineSpeechSchema>;
