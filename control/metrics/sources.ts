/**
 * Gauges whose value lives in another room: the supervisor (running sessions and their workers)
 * and the webhook outbox register a source while they run and remove it when they close; the
 * gauges sum the sources at scrape time. Several app instances in one process (tests, a host
 * program) simply add up.
 */
import { Gauge } from "prom-client";
import { registry } from "./registry.ts";
import { sampleWorkers } from "./workers.ts";

export interface BotSource {
  active(): number;
  /** One marker per running worker: a path every process of that session has on its command line. */
  workerMarkers(): string[];
}

export interface OutboxSource {
  depth(): number;
  /** Age in ms of the oldest undelivered event (by the outbox's own clock), or null when empty. */
  oldestAgeMs(): number | null;
}

const bots = new Set<BotSource>();
const outboxes = new Set<OutboxSource>();

export function addBotSource(source: BotSource): () => void {
  bots.add(source);
  return () => void bots.delete(source);
}

export function addOutboxSource(source: OutboxSource): () => void {
  outboxes.add(source);
  return () => void outboxes.delete(source);
}

const sum = <T>(set: Set<T>, f: (s: T) => number): number => [...set].reduce((n, s) => n + f(s), 0);
const registers = [registry];

new Gauge({
  name: "toa_bot_sessions_active",
  help: "Sessions running now (joining, lobby, in the call, or storing their recording)",
  registers,
  async collect() {
    this.set(sum(bots, (b) => b.active()));
    await sampleWorkers([...bots].flatMap((b) => b.workerMarkers()));
  },
});

new Gauge({
  name: "toa_webhook_outbox_depth",
  help: "Webhook events waiting in the outbox (not yet accepted by the receiver)",
  registers,
  collect() {
    this.set(sum(outboxes, (o) => o.depth()));
  },
});

new Gauge({
  name: "toa_webhook_outbox_oldest_age_seconds",
  help: "Age of the oldest webhook event still waiting in the outbox (0 when empty)",
  registers,
  collect() {
    this.set(Math.max(0, ...[...outboxes].map((o) => o.oldestAgeMs() ?? 0)) / 1000);
  },
});
