export { createWebhookOutbox, type WebhookOutbox, type WebhookOutboxOptions } from "./outbox.ts";
export { webhookPayloadSchema, type WebhookPayload, type WebhookEventName } from "./payload.ts";
export { DEAD_LETTER_DIR, storedEventSchema, type StoredEvent } from "./store.ts";
export { fullJitterDelay } from "./backoff.ts";
