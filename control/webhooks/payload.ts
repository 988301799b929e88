import { z } from "zod";
import { endReasonSchema, sessionStatusSchema } from "../../shared/journal/records.ts";

/** Webhook body (decisions.md "Webhooks"); `status_changed` is only sent with WEBHOOK_EVENTS. */
export const webhookPayloadSchema = z
  .object({
    event: z.enum(["finished", "status_changed"]),
    session_id: z.string().min(1),
    reference: z.string().nullable(),
    status: sessionStatusSchema,
    previous_status: sessionStatusSchema.nullable(),
    end_reason: endReasonSchema.nullable(),
    recording_file: z.string().nullable(),
    error_message: z.string().nullable(),
    /** When the event happened, ISO 8601 UTC. */
    timestamp: z.iso.datetime({ offset: true }),
  })
  .strict();

export type WebhookPayload = z.infer<typeof webhookPayloadSchema>;
export type WebhookEventName = WebhookPayload["event"];
