/**
 * The closed IPC protocol between the control plane (supervisor) and one meeting worker
 * (conventions.md 9): a discriminated union each way, every message parsed by zod on arrival,
 * an `init` → `ready` / `initFailed` handshake, request/response pairs matched by id.
 */
import { z } from "zod";

import { endReasonSchema, sessionStatusSchema, type SessionStatus } from "../journal/records.ts";
import { errorCodeSchema } from "../recording/error-codes.ts";
import { automaticLeaveSchema } from "../session/automatic-leave.ts";

export { endReasonSchema, sessionStatusSchema };
export type { EndReason, SessionStatus } from "../journal/records.ts";

export const FINAL_STATUSES: ReadonlySet<SessionStatus> = new Set(["stopped", "denied", "not_admitted", "interrupted", "error"]);

// ------------------------------------------------------------------ control → worker

export const initSchema = z.object({
  type: z.literal("init"),
  sessionId: z.string().uuid(),
  meetingUrl: z.string().url(),
  displayName: z.string(),
  record: z.boolean(),
  format: z.enum(["wav", "flac"]),
  /** Where ffmpeg writes while recording (the control plane moves it into storage after). */
  recordingPath: z.string(),
  /** The session's journal (RECORDINGS_DIR/.sessions/<id>.journal), written from the start. */
  journalPath: z.string(),
  /** A private folder for PulseAudio, Chromium profile and temp files; removed on exit. */
  workDir: z.string(),
  lobbyWaitMs: z.number().positive(),
  maxRecordingMs: z.number().positive(),
  mic: z.object({ enabled: z.boolean(), disableNoiseSuppression: z.boolean() }),
  chromiumPath: z.string(),
  logLevel: z.string(),
  /** #16: the join (link to lobby or call) fails `prejoin_stuck` after this long (JOIN_TIMEOUT_SECONDS). */
  joinTimeoutMs: z.number().positive().optional(),
  /** #16: RECORDINGS_DIR/.evidence/<session_id>: screenshots, page HTML, console, steps.json. */
  evidenceDir: z.string().optional(),
  /** #16: the `/join` request's automatic_leave (lobbyWaitMs and maxRecordingMs already applied). */
  automaticLeave: automaticLeaveSchema.nullable().optional(),
  /** The speaker timeline's journal (shared/timeline); beside the recording when absent. */
  timelinePath: z.string().optional(),
  /** SPEAKER_TIMELINE: false leaves the page unobserved (no timeline, no participant events). */
  observe: z.boolean().optional(),
  /** LISTEN_LOW_LATENCY: without a microphone the sink is paced all along, not only while heard. */
  listenLowLatency: z.boolean().optional(),
});
export type InitMessage = z.infer<typeof initSchema>;

/**
 * A warm worker (control/bot/warm-pool/): sent instead of `init` as the first message. The worker
 * starts PulseAudio and Chromium on a blank page in `workDir` (the future session's folder: the
 * pool names the worker by the id its session will take), answers `warmed`, and waits for `init`
 * without a deadline. A `stop` or a disconnect before `init` closes everything and ends it.
 */
export const warmSchema = z.object({
  type: z.literal("warm"),
  sessionId: z.string().uuid(),
  workDir: z.string(),
  mic: z.boolean(),
  chromiumPath: z.string(),
  logLevel: z.string(),
});
export type WarmMessage = z.infer<typeof warmSchema>;

export const stopSchema = z.object({ type: z.literal("stop"), reason: z.enum(["stopped_by_api", "shutdown"]) });
export const pingSchema = z.object({ type: z.literal("ping"), id: z.number() });

/** A request answered by a `response` with the same id (audio playback and streams). */
export const requestSchema = z.object({
  type: z.literal("request"),
  id: z.number(),
  op: z.string(),
  args: z.record(z.string(), z.unknown()),
});
export type WorkerRequest = z.infer<typeof requestSchema>;

/** The worker's turn to start Chromium has come (see `launchTurn`). */
export const launchGoSchema = z.object({ type: z.literal("launchGo") });

export const toWorkerSchema = z.discriminatedUnion("type", [initSchema, warmSchema, stopSchema, pingSchema, requestSchema, launchGoSchema]);
export type ToWorker = z.infer<typeof toWorkerSchema>;

// ------------------------------------------------------------------ worker → control

export const readySchema = z.object({ type: z.literal("ready"), pids: z.record(z.string(), z.number()) });
/** A warm worker's PulseAudio and Chromium are up; `init` may come. */
export const warmedSchema = z.object({ type: z.literal("warmed"), pids: z.record(z.string(), z.number()) });
export const initFailedSchema = z.object({ type: z.literal("initFailed"), message: z.string(), errorCode: errorCodeSchema.optional() });
export const statusSchema = z.object({
  type: z.literal("status"),
  status: sessionStatusSchema,
  previousStatus: sessionStatusSchema.nullable(),
  at: z.string(),
  endReason: endReasonSchema.nullable().optional(),
  errorMessage: z.string().nullable().optional(),
  errorCode: errorCodeSchema.nullable().optional(),
  joinedAt: z.string().nullable().optional(),
});
export type StatusMessage = z.infer<typeof statusSchema>;
export const participantsSchema = z.object({ type: z.literal("participants"), count: z.number().int().nullable() });
/** Someone joined or left the call (issue #17), for the `participant_joined` / `participant_left` webhooks. */
export const participantEventSchema = z.object({
  type: z.literal("participantEvent"),
  event: z.enum(["joined", "left"]),
  participant: z.object({ id: z.string(), name: z.string(), label: z.string().nullable() }),
  /** Seconds on the recording's clock, as in the timeline file. */
  offsetSeconds: z.number().nullable(),
  at: z.string(),
});
export type ParticipantEventMessage = z.infer<typeof participantEventSchema>;
/**
 * #13: the recording lost meeting audio: Chromium's playback stream into the recording sink ran
 * dry for `seconds` and the sink mixed silence instead (worker/audio/gaps.ts). Sent while in the call.
 */
export const audioGapSchema = z.object({ type: z.literal("audioGap"), seconds: z.number().nonnegative(), at: z.string() });
export type AudioGapMessage = z.infer<typeof audioGapSchema>;
/** Sent once, after the bot left and the recording file is closed (before the process exits). */
export const finishedSchema = z.object({
  type: z.literal("finished"),
  status: sessionStatusSchema,
  endReason: endReasonSchema,
  errorMessage: z.string().nullable(),
  /** #16: set with status `error`, null otherwise. */
  errorCode: errorCodeSchema.nullable().optional(),
  /** #16: evidence files written under init.evidenceDir. */
  evidenceFiles: z.array(z.string()).optional(),
  recordingPath: z.string().nullable(),
  recordingBytes: z.number().int().nullable(),
  at: z.string(),
});
export type FinishedMessage = z.infer<typeof finishedSchema>;
export const pongSchema = z.object({ type: z.literal("pong"), id: z.number() });
/**
 * Chromium's start is the heaviest moment of a worker, and many at once on a few cores each take
 * far longer (and more CPU) than in turn: the worker asks (`want`) before it launches Chromium
 * and says `done` once it is up or failed; the control plane answers `launchGo` when its turn
 * comes (control/bot/supervisor/launch-gate.ts). A worker that exits gives its turn back.
 */
export const launchTurnSchema = z.object({ type: z.literal("launchTurn"), phase: z.enum(["want", "done"]) });
export const responseSchema = z.object({
  type: z.literal("response"),
  id: z.number(),
  ok: z.boolean(),
  result: z.unknown().optional(),
  /** HTTP-like status and a public message, mapped by the supervisor to the API's errors. */
  error: z.object({ status: z.number(), message: z.string() }).optional(),
});
export type WorkerResponse = z.infer<typeof responseSchema>;

export const fromWorkerSchema = z.discriminatedUnion("type", [
  readySchema,
  warmedSchema,
  initFailedSchema,
  statusSchema,
  participantsSchema,
  participantEventSchema,
  audioGapSchema,
  finishedSchema,
  pongSchema,
  responseSchema,
  launchTurnSchema,
]);
export type FromWorker = z.infer<typeof fromWorkerSchema>;
