/**
 * The listener's event input: what the worker's listen hub forwards to every listener that asked
 * for `events`, as JSON text frames. Status events are produced by the session's own status
 * reporter; speech and participant events come from the participant timeline (issue #17), whose
 * in-worker emitter is connected through worker/listen/timeline-adapter.ts.
 *
 * `offset_seconds` is on the recording's clock: seconds from the first sample of the stored
 * recording (the producer of an event computes it, as it does for the timeline file).
 */
import { z } from "zod";
import { sessionStatusSchema } from "../journal/records.ts";

export const listenParticipantSchema = z.object({ id: z.string(), name: z.string() });
export type ListenParticipant = z.infer<typeof listenParticipantSchema>;

const offset = z.number().finite().nonnegative();

export const speechEventSchema = z.object({
  type: z.enum(["speech_started", "speech_stopped"]),
  participant: listenParticipantSchema,
  offset_seconds: offset,
});
export const participantEventSchema = z.looseObject({
  type: z.enum(["participant_joined", "participant_left"]),
  participant: listenParticipantSchema,
  offset_seconds: offset,
});
export const statusEventSchema = z.object({ type: z.literal("status"), status: sessionStatusSchema });

/** Events a producer may publish (validated on arrival: the hub never forwards a malformed one). */
export const listenEventSchema = z.union([speechEventSchema, participantEventSchema, statusEventSchema]);
export type ListenEvent = z.infer<typeof listenEventSchema>;

/** Sent by the control plane itself when a slow listener lost audio (never the newest). */
export interface OverrunEvent {
  type: "overrun";
  dropped_ms: number;
}

/** Where producers publish events for listeners (the worker's listen hub implements it). */
export interface ListenEventSink {
  publish(event: ListenEvent): void;
  /** Whether a listener is connected now (the observer drains the page more often then). */
  readonly listening?: boolean;
}
