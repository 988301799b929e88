/**
 * GET /metrics (issue 13): the text parses under a strict reader of the exposition format, and
 * the counters move with the events they count, through the real server on both providers:
 * HTTP requests by route template, sign-ins, refreshes, refusals, lockouts and rate-limit
 * refusals; a session of the (fake) worker for joins, finishes and uploads; the webhook outbox
 * against a real receiver and a dead one; upload retries against an S3 endpoint that refuses
 * connections. METRICS_TOKEN guards the route when set.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { authFeature } from "../../control/auth/feature.ts";
import { createBotFeature } from "../../control/bot/feature.ts";
import { createS3Store } from "../../control/storage/s3-store.ts";
import { uploadWithRetry } from "../../control/storage/index.ts";
import { createWebhookOutbox, type WebhookPayload } from "../../control/webhooks/index.ts";
import { cheapHasher, PASSWORD } from "../auth/helpers.ts";
import { FAKE_WORKER, MEETING_URL, waitForSession } from "../bot/fixtures/bot-app.ts";
import { startReceiver } from "../bot/fixtures/receiver.ts";
import { startTestApp, type TestApp } from "../harness/app.ts";
import { providers } from "../harness/databases.ts";
import { captureLogs } from "../harness/logs.ts";
import { parsePrometheus, type Exposition } from "../helpers/prometheus.ts";
import { freePort } from "../harness/free-port.ts";

async function scrape(app: TestApp, token?: string): Promise<Exposition> {
  const res = await app.request("GET", "/metrics", { token });
  assert.equal(res.status, 200, res.text);
  assert.match(res.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
  return parsePrometheus(res.text);
}

for (const provider of providers()) {
  describe(`metrics (${provider})`, { timeout: 180_000 }, () => {
    test("process, event loop, HTTP by route template, sign-in and refresh counters move with their events", async (t) => {
      const recordings = mkdtempSync(join(tmpdir(), "metrics-rec-"));
      const app = await startTestApp({
        provider,
        config: {
          LocalLogin: { AllowSelfRegistration: true, MaxFailedAttempts: 2, SignInRefusalFloor: "00:00:00", RateLimit: { PermitLimit: 1000 } },
          bot: { RECORDINGS_DIR: recordings },
        },
        host: { hooks: { passwordReset: async () => undefined }, passwordHasher: cheapHasher() },
        features: [authFeature, createBotFeature({ storage: { backend: "local" }, workerModule: FAKE_WORKER })],
      });
      t.after(() => app.close());
      // After the app's close (hooks run in registration order): a worker may still write there.
      t.after(() => rmSync(recordings, { recursive: true, force: true }));

      const before = await scrape(app);
      for (const family of ["process_cpu_user_seconds_total", "process_resident_memory_bytes", "nodejs_eventloop_lag_seconds", "nodejs_eventloop_lag_p99_seconds", "http_request_duration_seconds", "toa_bot_sessions_active", "toa_webhook_outbox_depth"]) {
        assert.ok(before.types.has(family), `${family} exported`);
      }

      const reg = await app.request("POST", "/auth/register", { body: { userName: "meter", email: "meter@example.test", password: PASSWORD } });
      assert.equal(reg.status, 201, reg.text);
      const ok = await app.request("POST", "/auth/login", { body: { identifier: "meter", password: PASSWORD } });
      assert.equal(ok.status, 200);
      const refresh = (ok.body as { refresh_token: string }).refresh_token;
      assert.equal((await app.request("POST", "/auth/refresh", { body: { refreshToken: refresh } })).status, 200);
      assert.equal((await app.request("POST", "/auth/refresh", { body: { refreshToken: "not-a-token" } })).status, 401);
      assert.equal((await app.request("POST", "/auth/login", { body: { identifier: "nobody", password: PASSWORD } })).status, 401);
      // MaxFailedAttempts 2: the second wrong password locks the account.
      for (let i = 0; i < 2; i++) assert.equal((await app.request("POST", "/auth/login", { body: { identifier: "meter", password: "wrong password!" } })).status, 401);
      assert.equal((await app.request("GET", "/status/00000000-0000-4000-8000-00000000abcd")).status, 404);
      assert.equal((await app.request("GET", "/no/such/path/12345")).status, 404);

      const after = await scrape(app);
      const delta = (name: string, labels?: Record<string, string>): number => after.sum(name, labels) - before.sum(name, labels);
      assert.equal(delta("toa_auth_logins_total", { result: "success" }), 1);
      assert.equal(delta("toa_auth_logins_total", { result: "refused", reason: "unknown-user" }), 1);
      assert.equal(delta("toa_auth_logins_total", { result: "refused", reason: "invalid-password" }), 2);
      assert.equal(delta("toa_auth_refreshes_total", { result: "success" }), 1);
      assert.equal(delta("toa_auth_refreshes_total", { result: "refused" }), 1);
      assert.equal(delta("toa_auth_lockouts_total", { kind: "password" }), 1);
      assert.equal(delta("http_requests_total", { route: "/auth/login", method: "POST", status: "200" }), 1);
      assert.equal(delta("http_requests_total", { route: "/auth/login", method: "POST", status: "401" }), 3);
      assert.equal(delta("http_request_duration_seconds_count", { route: "/auth/login", method: "POST", status: "401" }), 3);
      // The id is not a label: the template is.
      assert.equal(delta("http_requests_total", { route: "/status/:session_id", method: "GET", status: "404" }), 1);
      assert.equal(delta("http_requests_total", { route: "unmatched", status: "404" }), 1);
      assert.ok(!after.samples.some((s) => JSON.stringify(s.labels).includes("12345") || JSON.stringify(s.labels).includes("abcd")));
      // This scrape is in flight while it is rendered.
      assert.ok(after.value("http_requests_in_flight") >= 1);
    });

    test("a session: joins, active, finished by status and end_reason, upload stored, duration and lobby histograms", async (t) => {
      const recordings = mkdtempSync(join(tmpdir(), "metrics-rec-"));
      const app = await startTestApp({
        provider,
        config: { bot: { RECORDINGS_DIR: recordings, SHUTDOWN_GRACE_SECONDS: 10 } },
        features: [createBotFeature({ storage: { backend: "local" }, workerModule: FAKE_WORKER })],
      });
      t.after(() => app.close());
      t.after(() => rmSync(recordings, { recursive: true, force: true }));
      const before = await scrape(app);
      const joined = await app.request("POST", "/join", { body: { meeting_url: MEETING_URL } });
      assert.equal(joined.status, 200, joined.text);
      const id = String(((joined.body as { session: { session_id: string } }).session).session_id);
      await waitForSession(app, id, (s) => s.status === "recording");
      const running = await scrape(app);
      assert.equal(running.value("toa_bot_sessions_active") - before.value("toa_bot_sessions_active"), 1);
      await app.request("POST", `/stop/${id}`);
      await waitForSession(app, id, (s) => s.status === "stopped");
      const after = await scrape(app);
      const delta = (name: string, labels?: Record<string, string>): number => after.sum(name, labels) - before.sum(name, labels);
      assert.equal(delta("toa_bot_joins_total"), 1);
      assert.equal(delta("toa_bot_sessions_finished_total", { status: "stopped", end_reason: "stopped_by_api", error_code: "" }), 1);
      assert.equal(delta("toa_bot_join_to_lobby_seconds_count"), 1);
      assert.equal(delta("toa_bot_lobby_to_admitted_seconds_count"), 1);
      assert.equal(delta("toa_bot_session_duration_seconds_count"), 1);
      assert.equal(delta("toa_storage_uploads_total", { backend: "local", result: "stored" }), 1);
      assert.equal(after.value("toa_bot_sessions_active"), before.value("toa_bot_sessions_active"));
    });

    test("POST /join past MAX_CONCURRENT_SESSIONS counts a refused join", async (t) => {
      const recordings = mkdtempSync(join(tmpdir(), "metrics-rec-"));
      const app = await startTestApp({
        provider,
        config: { bot: { RECORDINGS_DIR: recordings, SHUTDOWN_GRACE_SECONDS: 10, MAX_CONCURRENT_SESSIONS: 1 } },
        features: [createBotFeature({ storage: { backend: "local" }, workerModule: FAKE_WORKER })],
      });
      t.after(() => app.close());
      t.after(() => rmSync(recordings, { recursive: true, force: true }));
      const before = await scrape(app);
      assert.equal((await app.request("POST", "/join", { body: { meeting_url: MEETING_URL, record: false } })).status, 200);
      assert.equal((await app.request("POST", "/join", { body: { meeting_url: MEETING_URL, record: false } })).status, 503);
      const after = await scrape(app);
      assert.equal(after.sum("toa_bot_joins_refused_total") - before.sum("toa_bot_joins_refused_total"), 1);
    });
  });
}

describe("metrics without a database in the loop", { timeout: 120_000 }, () => {
  test("METRICS_TOKEN: 401 without it, 200 with it; the bot token does not open it", async (t) => {
    const app = await startTestApp({ config: { server: { METRICS_TOKEN: "scrape-secret-123" }, bot: { BOT_ACCESS_TOKEN: "bot-secret-456" } }, features: [] });
    t.after(() => app.close());
    const none = await app.request("GET", "/metrics");
    assert.equal(none.status, 401);
    assert.ok(none.headers.get("www-authenticate"));
    assert.equal((await app.request("GET", "/metrics", { token: "bot-secret-456" })).status, 401);
    await scrape(app, "scrape-secret-123");
  });

  test("rate-limit refusals are counted", async (t) => {
    const app = await startTestApp({ config: { LocalLogin: { RateLimit: { PermitLimit: 1 }, SignInRefusalFloor: "00:00:00" } }, host: { hooks: { passwordReset: async () => undefined }, passwordHasher: cheapHasher() }, features: [authFeature] });
    t.after(() => app.close());
    const before = await scrape(app);
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await app.request("POST", "/auth/login", { body: { identifier: "x", password: "y" } })).status);
    assert.deepEqual(statuses, [401, 429, 429]);
    const after = await scrape(app);
    assert.equal(after.sum("toa_auth_rate_limited_total") - before.sum("toa_auth_rate_limited_total"), 2);
    assert.equal(after.sum("http_requests_total", { route: "/auth/login", status: "429" }) - before.sum("http_requests_total", { route: "/auth/login", status: "429" }), 2);
  });

  test("webhook outbox: deliveries by result, depth and oldest age while a receiver is down, dead letters", async (t) => {
    const app = await startTestApp({ features: [] });
    t.after(() => app.close());
    const dir = mkdtempSync(join(tmpdir(), "metrics-outbox-"));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const payload = (sessionId: string): WebhookPayload => ({
      event: "finished",
      session_id: sessionId,
      reference: null,
      status: "stopped",
      previous_status: "recording",
      end_reason: "stopped_by_api",
      recording_file: null,
      error_message: null,
      timestamp: new Date().toISOString(),
    });
    const before = await scrape(app);

    const receiver = await startReceiver();
    t.after(() => receiver.close());
    const good = createWebhookOutbox({ dir: join(dir, "good"), url: receiver.url, logger: captureLogs().logger });
    t.after(() => good.close());
    await good.start();
    await good.enqueue("00000000-0000-4000-8000-000000000001", payload("00000000-0000-4000-8000-000000000001"));
    await good.idle();
    await good.close();

    // A receiver that refuses connections: the event waits (depth 1, ageing), then dies after maxAgeMs.
    let clock = Date.now();
    const dead = createWebhookOutbox({ dir: join(dir, "dead"), url: `http://127.0.0.1:${await freePort()}/hook`, logger: captureLogs().logger, maxAgeMs: 60_000, minBackoffMs: 20, maxBackoffMs: 50, now: () => clock });
    t.after(() => dead.close());
    await dead.start();
    await dead.enqueue("00000000-0000-4000-8000-000000000002", payload("00000000-0000-4000-8000-000000000002"));
    let waiting = await scrape(app);
    for (let i = 0; i < 100 && waiting.sum("toa_webhook_deliveries_total", { result: "failed" }) - before.sum("toa_webhook_deliveries_total", { result: "failed" }) < 1; i++) {
      await new Promise((r) => setTimeout(r, 50));
      waiting = await scrape(app);
    }
    assert.equal(waiting.value("toa_webhook_outbox_depth"), 1);
    assert.ok(waiting.value("toa_webhook_outbox_oldest_age_seconds") >= 0);
    clock += 30_000;
    const older = await scrape(app);
    assert.ok(older.value("toa_webhook_outbox_oldest_age_seconds") >= 30, String(older.value("toa_webhook_outbox_oldest_age_seconds")));
    clock += 60_000;
    await dead.idle();
    await dead.close();
    const after = await scrape(app);
    const delta = (name: string, labels?: Record<string, string>): number => after.sum(name, labels) - before.sum(name, labels);
    assert.equal(delta("toa_webhook_deliveries_total", { result: "delivered" }), 1);
    assert.ok(delta("toa_webhook_deliveries_total", { result: "failed" }) >= 1);
    assert.equal(delta("toa_webhook_dead_letters_total"), 1);
    assert.equal(after.value("toa_webhook_outbox_depth"), 0);
  });

  test("storage: a store that refuses connections counts retries until the upload is cancelled", async (t) => {
    const app = await startTestApp({ features: [] });
    t.after(() => app.close());
    process.env.AWS_ACCESS_KEY_ID ??= "metrics-test";
    process.env.AWS_SECRET_ACCESS_KEY ??= "metrics-test-secret";
    const dir = mkdtempSync(join(tmpdir(), "metrics-s3-"));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, "a.wav");
    writeFileSync(file, Buffer.alloc(1024));
    const logger = captureLogs().logger;
    const store = createS3Store({ bucket: "rec", region: "us-east-1", endpoint: `http://127.0.0.1:${await freePort()}`, forcePathStyle: true }, { logger });
    const before = await scrape(app);
    const abort = new AbortController();
    const upload = uploadWithRetry(store, { localPath: file, sessionId: "00000000-0000-4000-8000-000000000003", reference: null, fileName: "a.wav", contentType: "audio/wav" }, { logger, signal: abort.signal, minDelayMs: 10, maxDelayMs: 20 });
    let now = before;
    for (let i = 0; i < 600 && now.sum("toa_storage_upload_retries_total", { backend: "s3" }) - before.sum("toa_storage_upload_retries_total", { backend: "s3" }) < 2; i++) {
      await new Promise((r) => setTimeout(r, 50));
      now = await scrape(app);
    }
    abort.abort();
    await assert.rejects(upload);
    assert.ok(now.sum("toa_storage_upload_retries_total", { backend: "s3" }) - before.sum("toa_storage_upload_retries_total", { backend: "s3" }) >= 2);
    assert.equal(now.sum("toa_storage_uploads_total", { backend: "s3" }) - before.sum("toa_storage_uploads_total", { backend: "s3" }), 0);
  });
});
