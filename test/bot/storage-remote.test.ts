/**
 * Remote storage at the session level (fake worker, SQLite, real Azurite and s3rver on loopback):
 * a session's WAV or FLAC lands under `<container|bucket>/<id>/<id>_<date>_<time>.<ext>` with its
 * content type and metadata, the local copy goes and the `finished` webhook carries the location;
 * a store that is down when the session ends gets the recording once it is back (and /readyz says
 * 503 meanwhile); a restart while the upload is pending resumes it with the real final status; a
 * wrong credential ends the session `error` with the store's message and keeps the local file; a
 * crashed worker's repaired recording is stored the same way (`interrupted`).
 */
import assert from "node:assert/strict";
import { access, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test, type TestContext } from "node:test";
import { BlobServiceClient } from "@azure/storage-blob";
import { GetObjectCommand, HeadObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { sessionPaths } from "../../control/bot/paths.ts";
import type { StorageConfig } from "../../control/storage/index.ts";
import type { TestApp } from "../harness/app.ts";
import { azuriteConnectionString, freePort, outageProxy, S3RVER_KEY, startAzurite, startS3rver, type RunningEmulator } from "../storage/emulators.ts";
import { MEETING_URL, startBotApp, waitForSession, type BotApp } from "./fixtures/bot-app.ts";
import { startReceiver, type Receiver } from "./fixtures/receiver.ts";

type Kind = "azure" | "s3";
type Format = "wav" | "flac";
const PLACE = "recordings";
/** Short backoff so a store that comes back is noticed within a second. */
const FAST_RETRY = { minDelayMs: 100, maxDelayMs: 1_000 };
/** A well-formed account key that is not Azurite's. */
const WRONG_AZURE_KEY = Buffer.alloc(64, 1).toString("base64");

// s3rver accepts exactly this key pair; the S3 store reads it from the standard AWS env chain.
const savedKeys = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
function useAwsKeys(id: string, secret: string): void {
  process.env.AWS_ACCESS_KEY_ID = id;
  process.env.AWS_SECRET_ACCESS_KEY = secret;
}
function restoreAwsKeys(): void {
  for (const [key, value] of [["AWS_ACCESS_KEY_ID", savedKeys.id], ["AWS_SECRET_ACCESS_KEY", savedKeys.secret]] as const) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
}
useAwsKeys(S3RVER_KEY, S3RVER_KEY);
after(restoreAwsKeys);

interface Remote {
  kind: Kind;
  config: StorageConfig;
  /** Starts the emulator on the remote's port (with the container or bucket). */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** The stored object: content type, metadata (decoded) and its first bytes. */
  read(key: string): Promise<{ contentType: string | undefined; metadata: Record<string, string>; head: string; bytes: number }>;
}

async function remote(t: TestContext, kind: Kind, options: { started?: boolean; azureKey?: string } = {}): Promise<Remote> {
  const dir = await mkdtemp(join(tmpdir(), `bot-store-${kind}-`));
  const port = await freePort();
  let running: RunningEmulator | null = null;
  const stop = async (): Promise<void> => {
    await running?.stop();
    running = null;
  };
  t.after(async () => {
    await stop();
    await rm(dir, { recursive: true, force: true });
  });
  const decode = (m: Record<string, string> | undefined): Record<string, string> =>
    Object.fromEntries(Object.entries(m ?? {}).map(([k, v]) => [k, decodeURIComponent(v)]));
  let r: Remote;
  if (kind === "azure") {
    // Azurite runs (with its container) from the first start to the test's end; the store "goes
    // down" and "comes back" as its port does (emulators.ts outageProxy).
    const proxy = await outageProxy(port);
    const store = proxy.port;
    const service = (): BlobServiceClient => BlobServiceClient.fromConnectionString(azuriteConnectionString(port));
    t.after(() => proxy.down());
    r = {
      kind,
      config: { backend: "azure", connectionString: azuriteConnectionString(store, options.azureKey), container: PLACE },
      async start() {
        if (!running) {
          running = await startAzurite(port, join(dir, "azurite"));
          await service().getContainerClient(PLACE).createIfNotExists();
        }
        await proxy.up();
      },
      stop: () => proxy.down(),
      async read(key) {
        const blob = service().getContainerClient(PLACE).getBlockBlobClient(key);
        const properties = await blob.getProperties();
        const body = await blob.downloadToBuffer();
        return { contentType: properties.contentType, metadata: decode(properties.metadata), head: body.subarray(0, 4).toString("latin1"), bytes: body.length };
      },
    };
  } else {
    const endpoint = `http://127.0.0.1:${port}`;
    const client = (): S3Client =>
      new S3Client({ region: "us-east-1", endpoint, forcePathStyle: true, credentials: { accessKeyId: S3RVER_KEY, secretAccessKey: S3RVER_KEY } });
    r = {
      kind,
      config: { backend: "s3", bucket: PLACE, region: "us-east-1", endpoint, forcePathStyle: true },
      async start() {
        running = await startS3rver(port, join(dir, "s3rver"), [PLACE]);
      },
      stop,
      async read(key) {
        const head = await client().send(new HeadObjectCommand({ Bucket: PLACE, Key: key }));
        const object = await client().send(new GetObjectCommand({ Bucket: PLACE, Key: key }));
        const body = Buffer.from((await object.Body?.transformToByteArray()) ?? []);
        return { contentType: head.ContentType, metadata: decode(head.Metadata), head: body.subarray(0, 4).toString("latin1"), bytes: body.length };
      },
    };
  }
  if (options.started !== false) await r.start();
  else if (kind === "azure") {
    // The container exists before the store's port first opens: created after a late start, the
    // product's upload retry could reach Azurite first and be told, rightly, that the container
    // does not exist (a permanent error that ends the session).
    await r.start();
    await r.stop();
  }
  return r;
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(() => true, () => false);
}

/**
 * Joins, records a little over a second of tone, asks the session to stop; returns its id. POST
 * /stop waits (boundedly) for the session's end, which includes the upload: with `detach` the
 * answer is not awaited, so a test can bring the store back meanwhile.
 */
async function recordAndStop(app: TestApp, reference: string, detach = false): Promise<string> {
  const join = await app.request("POST", "/join", { body: { meeting_url: MEETING_URL, reference } });
  assert.equal(join.status, 200, join.text);
  const id = String(((join.body as Record<string, unknown>).session as Record<string, unknown>).session_id);
  await waitForSession(app, id, (s) => s.status === "recording");
  await new Promise((r) => setTimeout(r, 1_500));
  const stop = app.request("POST", `/stop/${id}`).then((res) => assert.ok(res.status < 300, res.text));
  if (detach) stop.catch(() => undefined);
  else await stop;
  return id;
}

async function waitForLog(app: TestApp, text: string, timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const line = app.logs.lines.find((l) => l.includes(text));
    if (line) return line;
    if (Date.now() > deadline) throw new Error(`no log line with ${JSON.stringify(text)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function storageProblem(app: TestApp): Promise<{ status: number; storage: string | undefined }> {
  const res = await app.request("GET", "/readyz");
  const problems = (res.body as { problems?: Record<string, string> }).problems ?? {};
  return { status: res.status, storage: problems.storage };
}

/** The stored recording, its object and the finished webhook all agree on the remote location. */
async function assertStored(r: Remote, app: BotApp, receiver: Receiver, id: string, reference: string, format: Format, status = "stopped"): Promise<void> {
  const s = await waitForSession(app, id, (x) => x.status === status && typeof x.recording_file === "string", 60_000);
  const file = String(s.recording_file);
  assert.match(file, new RegExp(`^${PLACE}/${id}/${id}_\\d{8}_\\d{6}\\.${format}$`));
  assert.equal(s.error_message, null);
  const object = await r.read(file.slice(PLACE.length + 1));
  assert.equal(object.contentType, format === "flac" ? "audio/flac" : "audio/wav");
  assert.equal(object.metadata.session_id, id);
  assert.equal(object.metadata.reference, reference);
  assert.equal(object.head, format === "flac" ? "fLaC" : "RIFF");
  assert.ok(object.bytes > 10_000, `${object.bytes} bytes`);
  assert.equal(await exists(sessionPaths(app.recordingsDir, id, format).recording), false, "local copy deleted");
  const hook = await receiver.waitFor((e) => e.event === "finished" && e.session_id === id, 30_000);
  assert.equal(hook.status, status);
  assert.equal(hook.recording_file, file);
  assert.equal(hook.reference, reference);
}

for (const kind of ["azure", "s3"] as const) {
  describe(`remote storage: ${kind}`, { timeout: 300_000, concurrency: false }, () => {
    for (const format of ["wav", "flac"] as const) {
      test(`a ${format} session lands under its object name with type and metadata; webhook carries the location`, async (t) => {
        const r = await remote(t, kind);
        const receiver = await startReceiver();
        t.after(() => receiver.close());
        const app = await startBotApp(t, { bot: { RECORDING_FORMAT: format, WEBHOOK_URL: receiver.url }, feature: { storage: r.config, uploadRetry: FAST_RETRY } });
        assert.equal((await storageProblem(app)).storage, undefined, "the store is ready");
        const reference = `Réunion ${kind}/${format} 週次`;
        const id = await recordAndStop(app, reference);
        await assertStored(r, app, receiver, id, reference, format);
      });
    }

    test("the store is down when the session ends: /readyz 503, then the recording arrives and the webhook follows", async (t) => {
      const r = await remote(t, kind, { started: false });
      const receiver = await startReceiver();
      t.after(() => receiver.close());
      const app = await startBotApp(t, { bot: { WEBHOOK_URL: receiver.url }, feature: { storage: r.config, uploadRetry: FAST_RETRY } });
      const down = await storageProblem(app);
      assert.equal(down.status, 503);
      assert.match(down.storage ?? "", /unreachable/);
      const id = await recordAndStop(app, "outage", true);
      await waitForLog(app, "recording upload failed; retrying");
      assert.equal(receiver.events.some((e) => e.event === "finished" && e.session_id === id), false, "no finished webhook before the upload");
      assert.ok(await exists(sessionPaths(app.recordingsDir, id, "wav").recording), "the local copy waits for the store");
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      await r.start();
      await assertStored(r, app, receiver, id, "outage", "wav");
      assert.equal((await storageProblem(app)).storage, undefined, "ready again");
    });

    test("a restart while the upload is pending resumes it and keeps the status stopped", async (t) => {
      const r = await remote(t, kind, { started: false });
      const receiver = await startReceiver();
      t.after(() => receiver.close());
      const dir = await mkdtemp(join(tmpdir(), "bot-store-restart-"));
      t.after(() => rm(dir, { recursive: true, force: true }));
      const shared = {
        recordingsDir: join(dir, "rec"),
        databaseUrl: `file:${join(dir, "app.db")}`,
        bot: { WEBHOOK_URL: receiver.url, SHUTDOWN_GRACE_SECONDS: 1 },
        feature: { storage: r.config, uploadRetry: FAST_RETRY, recoveryWaitMs: 0 },
      };
      const first = await startBotApp(t, shared);
      const id = await recordAndStop(first, "restart", true);
      await waitForLog(first, "recording upload failed; retrying");
      await first.close();
      assert.equal(receiver.events.some((e) => e.event === "finished" && e.session_id === id), false, "the first run sent no finished webhook");

      const second = await startBotApp(t, shared);
      await waitForLog(second, "resuming the end of a finished session");
      await r.start();
      await assertStored(r, second, receiver, id, "restart", "wav");
      const finished = receiver.events.filter((e) => e.event === "finished" && e.session_id === id);
      assert.equal(finished.length, 1);
      assert.equal(finished[0]?.end_reason, "stopped_by_api");
    });

    test("a worker that crashes mid-recording: the repaired recording goes to the store, status interrupted", async (t) => {
      const r = await remote(t, kind);
      const receiver = await startReceiver();
      t.after(() => receiver.close());
      const app = await startBotApp(t, { bot: { WEBHOOK_URL: receiver.url }, feature: { storage: r.config, uploadRetry: FAST_RETRY } });
      const join = await app.request("POST", "/join", { body: { meeting_url: MEETING_URL, reference: "crash", display_name: "fake:crash" } });
      assert.equal(join.status, 200, join.text);
      const id = String(((join.body as Record<string, unknown>).session as Record<string, unknown>).session_id);
      await assertStored(r, app, receiver, id, "crash", "wav", "interrupted");
    });

    test("a wrong credential ends the session error with the store's message; the local file is kept", async (t) => {
      const r = await remote(t, kind, { azureKey: WRONG_AZURE_KEY });
      if (kind === "s3") {
        useAwsKeys("WRONGKEY", "wrong-secret");
        t.after(() => useAwsKeys(S3RVER_KEY, S3RVER_KEY));
      }
      const receiver = await startReceiver();
      t.after(() => receiver.close());
      const app = await startBotApp(t, { bot: { WEBHOOK_URL: receiver.url }, feature: { storage: r.config, uploadRetry: FAST_RETRY } });
      const ready = await storageProblem(app);
      assert.equal(ready.status, 503);
      assert.match(ready.storage ?? "", /authentication failed/);
      const id = await recordAndStop(app, "wrong-key");
      const s = await waitForSession(app, id, (x) => x.status === "error", 60_000);
      const fix = kind === "azure" ? /authentication failed .*check AZURE_STORAGE_CONNECTION_STRING/ : /authentication failed .*check AWS_ACCESS_KEY_ID/;
      assert.match(String(s.error_message), fix);
      assert.equal(s.end_reason, "error");
      assert.equal(s.recording_file, null);
      const local = sessionPaths(app.recordingsDir, id, "wav").recording;
      assert.ok(await exists(local), "local copy kept");
      assert.match(String(s.error_message), new RegExp(`kept at ${local.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
      const line = await waitForLog(app, "recording could not be stored");
      assert.match(line, fix);
      const hook = await receiver.waitFor((e) => e.event === "finished" && e.session_id === id, 30_000);
      assert.equal(hook.status, "error");
      assert.equal(hook.error_message, s.error_message);
    });
  });
}
