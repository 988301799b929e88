/**
 * The process's metrics (Prometheus, prom-client): one registry per process, because Prometheus
 * scrapes a process. Counters and histograms are written by small hooks at the event sites
 * (control/metrics/index.ts); gauges whose value lives elsewhere (running sessions, the webhook
 * outbox) read it at scrape time from the sources their owners register (sources.ts).
 */
import { Counter, Gauge, Histogram, Registry, Summary, collectDefaultMetrics } from "prom-client";

export const registry = new Registry();
// process_* (CPU, memory, file descriptors) and nodejs_* (event-loop lag, heap, GC) metrics.
collectDefaultMetrics({ register: registry });

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Joining a meeting takes seconds; a lobby wait can take its whole MEETING_WAIT_FOR_LOBBY. */
const JOIN_SECONDS = [1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800];
const SESSION_SECONDS = [10, 60, 300, 900, 1800, 3600, 7200, 14400];
const registers = [registry];

export const http = {
  requests: new Counter({ name: "http_requests_total", help: "HTTP requests answered, by route template, method and status", labelNames: ["route", "method", "status"], registers }),
  duration: new Histogram({ name: "http_request_duration_seconds", help: "Time to answer an HTTP request, by route template, method and status", labelNames: ["route", "method", "status"], buckets: SECONDS, registers }),
  inFlight: new Gauge({ name: "http_requests_in_flight", help: "HTTP requests being answered now", registers }),
};

export const bot = {
  joins: new Counter({ name: "toa_bot_joins_total", help: "Sessions started by POST /join", registers }),
  refusedJoins: new Counter({ name: "toa_bot_joins_refused_total", help: "POST /join refused because every session slot was taken (503)", registers }),
  finished: new Counter({ name: "toa_bot_sessions_finished_total", help: "Sessions that reached a final status, by status, end_reason and error_code", labelNames: ["status", "end_reason", "error_code"], registers }),
  joinToLobby: new Histogram({ name: "toa_bot_join_to_lobby_seconds", help: "From POST /join to the bot waiting in the lobby", buckets: JOIN_SECONDS, registers }),
  lobbyToAdmitted: new Histogram({ name: "toa_bot_lobby_to_admitted_seconds", help: "From the lobby to being admitted into the call", buckets: JOIN_SECONDS, registers }),
  joinToAdmitted: new Histogram({ name: "toa_bot_join_to_admitted_seconds", help: "From POST /join to being in the call (lobby or not)", buckets: JOIN_SECONDS, registers }),
  duration: new Histogram({ name: "toa_bot_session_duration_seconds", help: "From POST /join to the final status", buckets: SESSION_SECONDS, registers }),
  audioGaps: new Counter({ name: "toa_bot_audio_gaps_total", help: "Gaps in recorded meeting audio: Chromium's playback stream into the recording sink under-ran and silence was mixed in its place", registers }),
  audioGapSeconds: new Counter({ name: "toa_bot_audio_gap_seconds_total", help: "Meeting audio lost to those gaps, in seconds (by PulseAudio's clock; the file's silence differs by about one mixing block)", registers }),
  workerMemory: new Summary({ name: "toa_bot_worker_memory_bytes", help: "Memory (PSS) of one meeting worker with its Chromium, PulseAudio and ffmpeg, sampled per worker at each scrape", percentiles: [0.5, 0.9, 0.99], maxAgeSeconds: 600, ageBuckets: 5, registers }),
  workerCpu: new Summary({ name: "toa_bot_worker_cpu_ratio", help: "CPU of one meeting worker with its children, in cores, averaged since the previous scrape, per worker", percentiles: [0.5, 0.9, 0.99], maxAgeSeconds: 600, ageBuckets: 5, registers }),
};

export const webhooks = {
  deliveries: new Counter({ name: "toa_webhook_deliveries_total", help: "Webhook delivery attempts, by result (delivered: 2xx; failed: retried later)", labelNames: ["result"], registers }),
  deadLetters: new Counter({ name: "toa_webhook_dead_letters_total", help: "Webhooks not accepted within 24 hours, moved to .webhooks/dead-letter", registers }),
};

export const storage = {
  uploads: new Counter({ name: "toa_storage_uploads_total", help: "Recording uploads, by backend and result (stored, failed: permanent failure)", labelNames: ["backend", "result"], registers }),
  retries: new Counter({ name: "toa_storage_upload_retries_total", help: "Recording upload attempts that failed and were retried, by backend", labelNames: ["backend"], registers }),
};

export const auth = {
  logins: new Counter({ name: "toa_auth_logins_total", help: "Password sign-ins, by result (success, challenge: second factor asked, refused) and refusal reason", labelNames: ["result", "reason"], registers }),
  refreshes: new Counter({ name: "toa_auth_refreshes_total", help: "Refresh token exchanges, by result (success, refused) and refusal reason", labelNames: ["result", "reason"], registers }),
  lockouts: new Counter({ name: "toa_auth_lockouts_total", help: "Accounts locked, by what was guessed (password, second_factor)", labelNames: ["kind"], registers }),
  rateLimited: new Counter({ name: "toa_auth_rate_limited_total", help: "Requests refused by the per-address rate limit (429)", registers }),
};
