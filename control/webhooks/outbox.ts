import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "../../shared/log/logger.ts";
import { fullJitterDelay } from "./backoff.ts";
import { attemptDelivery, createSigner } from "./deliver.ts";
import { webhookPayloadSchema, type WebhookPayload } from "./payload.ts";
import { assertSafeSessionId, newStoredEvent, OutboxStore, type StoredEvent } from "./store.ts";
import { addOutboxSource, metrics } from "../metrics/index.ts";

export interface WebhookOutboxOptions {
  /** Directory of pending events; created if absent. Must not be shared by two live outboxes. */
  dir: string;
  url: string;
  /** Standard Webhooks secret (`whsec_<base64>`) or raw key text; unset sends unsigned. */
  secret?: string;
  logger: Logger;
  /** Retry window from enqueue (recorder-bot.md "Events": up to 24 hours). */
  maxAgeMs?: number;
  attemptTimeoutMs?: number;
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** Clock for the retry window (ms); tests move it forward instead of waiting a day. */
  now?: () => number;
}

export interface WebhookOutbox {
  /** Resolves once the event is durably on disk; delivery happens in the background. */
  enqueue(sessionId: string, payload: WebhookPayload): Promise<void>;
  /** Loads events left on disk by an earlier process and starts delivering. */
  start(): Promise<void>;
  /** Stops delivery promptly (aborting requests in flight); undelivered events stay on disk. */
  close(): Promise<void>;
  /** Resolves when no event is pending in this outbox. */
  idle(): Promise<void>;
  /** Sessions the outbox holds state for in memory; 0 once every queue has drained. */
  trackedSessions(): number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

interface Queued {
  event: StoredEvent;
  /** False when the write failed: the caller got the error and the event is dropped. */
  durable: Promise<boolean>;
}

interface SessionQueue {
  items: Queued[];
  pump: Promise<void> | null;
}

type Outcome = "delivered" | "expired" | "closed";

export function createWebhookOutbox(options: WebhookOutboxOptions): WebhookOutbox {
  const maxAgeMs = options.maxAgeMs ?? DAY_MS;
  const attemptTimeoutMs = options.attemptTimeoutMs ?? 10_000;
  const minBackoffMs = options.minBackoffMs ?? 1_000;
  const maxBackoffMs = options.maxBackoffMs ?? 10 * 60_000;
  const now = options.now ?? Date.now;
  const logger = options.logger.child({ component: "webhook-outbox" });
  const signer = options.secret ? createSigner(options.secret) : null;
  const store = new OutboxStore(options.dir, logger);

  const queues = new Map<string, SessionQueue>();
  const nextSeq = new Map<string, number>();
  const writes = new Set<Promise<boolean>>();
  const abort = new AbortController();
  let idleWaiters: (() => void)[] = [];
  let pending = 0;
  let started = false;
  let closed = false;
  let loaded: Promise<void> | null = null;
  let removeSource: (() => void) | undefined;

  const queueOf = (sessionId: string): SessionQueue => {
    let queue = queues.get(sessionId);
    if (!queue) {
      queue = { items: [], pump: null };
      queues.set(sessionId, queue);
    }
    return queue;
  };

  // Loading runs once, before the first enqueue or start, so sequence numbers continue after
  // the events an earlier process left and those events go out first.
  const load = (): Promise<void> =>
    (loaded ??= (async () => {
      await store.init();
      for (const [sessionId, events] of await store.load()) {
        const queue = queueOf(sessionId);
        for (const event of events) {
          queue.items.push({ event, durable: Promise.resolve(true) });
          pending++;
        }
        nextSeq.set(sessionId, (events.at(-1)?.seq ?? 0) + 1);
      }
      if (pending > 0) logger.info({ pending }, "webhook outbox loaded pending events");
    })().catch((error: unknown) => {
      // Forget the failure (e.g. the directory was not creatable yet) so a later call retries.
      loaded = null;
      throw error;
    }));

  const settle = (): void => {
    pending--;
    if (pending === 0) {
      for (const resolve of idleWaiters) resolve();
      idleWaiters = [];
    }
  };

  const deliver = async (event: StoredEvent): Promise<Outcome> => {
    const context = { webhook_id: event.webhook_id, session_id: event.session_id, event: event.payload.event };
    for (let attempt = 0; ; attempt++) {
      if (closed) return "closed";
      if (now() - event.enqueued_at >= maxAgeMs) {
        metrics.webhookDeadLetter();
        logger.error({ ...context, attempts: attempt, max_age_ms: maxAgeMs }, "webhook not accepted in time; moved to dead-letter");
        return "expired";
      }
      const outcome = await attemptDelivery(event, { url: options.url, signer, timeoutMs: attemptTimeoutMs, signal: abort.signal });
      metrics.webhookAttempt(outcome.ok ? "delivered" : "failed");
      if (outcome.ok) {
        logger.debug({ ...context, attempts: attempt + 1, status: outcome.status }, "webhook delivered");
        return "delivered";
      }
      if (closed) return "closed";
      const remaining = Math.max(0, maxAgeMs - (now() - event.enqueued_at));
      const delay = Math.min(fullJitterDelay(attempt, minBackoffMs, maxBackoffMs), remaining);
      logger.warn(
        { ...context, attempt: attempt + 1, status: outcome.status, error: outcome.error, retry_in_ms: delay },
        "webhook attempt failed",
      );
      try {
        await sleep(delay, undefined, { signal: abort.signal });
      } catch {
        return "closed";
      }
    }
  };

  const runQueue = async (queue: SessionQueue): Promise<void> => {
    while (!closed) {
      const head = queue.items[0];
      if (!head) return;
      // Strict order per session: the next event waits until this one is accepted or expired.
      if (await head.durable) {
        const outcome = await deliver(head.event);
        if (outcome === "closed") return;
        try {
          if (outcome === "delivered") await store.remove(head.event);
          else await store.deadLetter(head.event);
        } catch (error) {
          logger.error({ webhook_id: head.event.webhook_id, err: error }, "webhook outbox file update failed");
        }
      }
      queue.items.shift();
      settle();
    }
  };

  const kick = (queue: SessionQueue, sessionId: string): void => {
    if (!started || closed || queue.pump) return;
    queue.pump = runQueue(queue).finally(() => {
      queue.pump = null;
      // An event enqueued while the loop was finishing must not be stranded.
      if (queue.items.length > 0) kick(queue, sessionId);
      else if (!closed && queues.get(sessionId) === queue) {
        // Drained: forget the session, so the maps hold only sessions with events in flight
        // (a later event starts a new queue; file names stay unique through the webhook id).
        queues.delete(sessionId);
        nextSeq.delete(sessionId);
      }
    });
  };

  return {
    async enqueue(sessionId, payload) {
      assertSafeSessionId(sessionId);
      const body = webhookPayloadSchema.parse(payload);
      if (body.session_id !== sessionId) throw new Error("webhook payload session_id differs from the session");
      if (closed) throw new Error("webhook outbox is closed");
      await load();
      if (closed) throw new Error("webhook outbox is closed");
      // Everything from here to the push is synchronous, so enqueue order is delivery order.
      const seq = nextSeq.get(sessionId) ?? 1;
      nextSeq.set(sessionId, seq + 1);
      const event = newStoredEvent(sessionId, seq, now(), body);
      let failure: unknown = null;
      const durable = store.write(event).then(
        () => true,
        (error: unknown) => {
          failure = error;
          return false;
        },
      );
      writes.add(durable);
      void durable.finally(() => writes.delete(durable));
      const queue = queueOf(sessionId);
      queue.items.push({ event, durable });
      pending++;
      kick(queue, sessionId);
      if (!(await durable)) throw failure;
    },

    async start() {
      if (closed) throw new Error("webhook outbox is closed");
      await load();
      started = true;
      removeSource ??= addOutboxSource({ depth: () => pending, oldestAgeMs: () => Math.max(0, ...[...queues.values()].map((q) => (q.items[0] ? now() - q.items[0].event.enqueued_at : 0))) });
      for (const [sessionId, queue] of queues) kick(queue, sessionId);
    },

    async close() {
      if (closed) return;
      closed = true;
      removeSource?.();
      abort.abort();
      await loaded?.catch(() => undefined);
      await Promise.all([...queues.values()].map((queue) => queue.pump));
      await Promise.all(writes);
    },

    trackedSessions: () => queues.size + [...nextSeq.keys()].filter((id) => !queues.has(id)).length,

    idle() {
      if (pending === 0) return Promise.resolve();
      return new Promise<void>((resolve) => idleWaiters.push(resolve));
    },
  };
}
