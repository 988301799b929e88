import { z } from "zod";
import { endReasonSchema, sessionStatusSchema } from "../../shared/journal/records.ts";
import { errorCodeSchema } from "../../shared/recording/error-codes.ts";
import { automaticLeaveSchema } from "../../shared/session/automatic-leave.ts";

/** Webhook body (decisions.md "Webhooks"); `status_changed` is only sent with WEBHOOK_EVENTS. */
export const statusPayloadSchema = z
  .object({
    event: z.enum(["finished", "status_changed"]),
    session_id: z.string().min(1),
    reference: z.string().nullable(),
    status: sessionStatusSchema,
    previous_status: sessionStatusSchema.nullable(),
    end_reason: endReasonSchema.nullable(),
    recording_file: z.string().nullable(),
    error_message: z.string().nullable(),
    /** #16: the closed list of shared/recording/error-codes.ts with status `error`, else null. */
    error_code: errorCodeSchema.nullable().optional(),
    /** #16 (`finished`): the session's evidence files, served by GET /sessions/{id}/evidence/{name}. */
    evidence_files: z.array(z.string()).optional(),
    /** #16 (`finished`): the `/join` request's automatic_leave, null when it sent none. */
    automatic_leave: automaticLeaveSchema.nullable().optional(),
    /** The instance that ran the session, in cluster mode only (#19). */
    instance_id: z.string().optional(),
    /** `finished` only: where the speaker timeline was stored (issue #17), as for recording_file. */
    timeline_file: z.string().nullable().optional(),
    /** When the event happened, ISO 8601 UTC. */
    timestamp: z.iso.datetime({ offset: true }),
  })
  .strict();

/** Someone joined or left the call (issue #17; only with WEBHOOK_EVENTS), in order with the status events. */
export const participantPayloadSchema = z
  .object({
    event: z.enum(["participant_joined", "participant_left"]),
    session_id: z.string().min(1),
    reference: z.string().nullable(),
    participant: z.object({ id: z.string(), name: z.string(), label: z.string().nullable() }).strict(),
    /** Seconds from the recording's first sample, as in the timeline file. */
    offset_seconds: z.number().nullable(),
    timestamp: z.iso.datetime({ offset: true }),
  })
  .strict();

export const webhookPayloadSchema = z.union([statusPayloadSchema, participantPayloadSchema]);

export type WebhookPayload = z.infer<typeof webhookPayloadSchema>;
export type WebhookEventName = WebhookPayload["event"];
