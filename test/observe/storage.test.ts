/**
 * Where the speaker timeline goes (issue #17), with the fake worker writing the observer's
 * journal: beside the recording through the local store, Azure (Azurite) and S3 (s3rver), as
 * `<id>_<YYYYMMDD>_<HHMMSS>.timeline.json` of type application/json; `timeline_file` on the
 * status and the `finished` webhook; the route answering the stored file; a `record: false`
 * session getting one named by its admission; a crashed worker's session (`interrupted`) getting
 * its timeline too; a session never admitted getting none (404 on the route).
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { after, describe, test, type TestContext } from "node:test";
import { BlobServiceClient } from "@azure/storage-blob";
import { GetObjectCommand, S3Client } from "@aws-sdk/client-s3";
import type { StorageConfig } from "../../control/storage/index.ts";
import { azuriteConnectionString, freePort, S3RVER_KEY, startAzurite, startS3rver } from "../storage/emulators.ts";
import { MEETING_URL, startBotApp, waitForSession, type BotApp } from "../bot/fixtures/bot-app.ts";
import { startReceiver } from "../bot/fixtures/receiver.ts";
import { providers, type Provider } from "../harness/databases.ts";

type Json = Record<string, unknown>;
const PLACE = "recordings";
const FAST_RETRY = { minDelayMs: 100, maxDelayMs: 1_000 };

const savedKeys = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
process.env.AWS_ACCESS_KEY_ID = S3RVER_KEY;
process.env.AWS_SECRET_ACCESS_KEY = S3RVER_KEY;
after(() => {
  for (const [key, value] of [["AWS_ACCESS_KEY_ID", savedKeys.id], ["AWS_SECRET_ACCESS_KEY", savedKeys.secret]] as const) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
});

interface Store {
  config: StorageConfig;
  /** The stored object's content type and body. */
  read(location: string): Promise<{ contentType: string | undefined; body: string }>;
}

async function store(t: TestContext, kind: "local" | "azure" | "s3"): Promise<Store> {
  if (kind === "local") return { config: { backend: "local" }, read: async (location) => ({ contentType: "application/json", body: await readFile(location, "utf8") }) };
  const dir = await mkdtemp(join(tmpdir(), `timeline-${kind}-`));
  const port = await freePort();
  if (kind === "azure") {
    const running = await startAzurite(port, join(dir, "azurite"));
    t.after(async () => {
      await running.stop();
      await rm(dir, { recursive: true, force: true });
    });
    const container = BlobServiceClient.fromConnectionString(azuriteConnectionString(port)).getContainerClient(PLACE);
    await container.createIfNotExists();
    return {
      config: { backend: "azure", connectionString: azuriteConnectionString(port), container: PLACE },
      async read(location) {
        const blob = container.getBlockBlobClient(location.slice(PLACE.length + 1));
        return { contentType: (await blob.getProperties()).contentType, body: (await blob.downloadToBuffer()).toString("utf8") };
      },
    };
  }
  const running = await startS3rver(port, join(dir, "s3rver"), [PLACE]);
  t.after(async () => {
    await running.stop();
    await rm(dir, { recursive: true, force: true });
  });
  const client = new S3Client({ region: "us-east-1", endpoint: `http://127.0.0.1:${port}`, forcePathStyle: true, credentials: { accessKeyId: S3RVER_KEY, secretAccessKey: S3RVER_KEY } });
  return {
    config: { backend: "s3", bucket: PLACE, region: "us-east-1", endpoint: `http://127.0.0.1:${port}`, forcePathStyle: true },
    async read(location) {
      const object = await client.send(new GetObjectCommand({ Bucket: PLACE, Key: location.slice(PLACE.length + 1) }));
      return { contentType: object.ContentType, body: Buffer.from((await object.Body?.transformToByteArray()) ?? []).toString("utf8") };
    },
  };
}

async function join_(app: BotApp, body: Json): Promise<string> {
  const res = await app.request("POST", "/join", { body: { meeting_url: MEETING_URL, ...body } });
  assert.equal(res.status, 200, res.text);
  return String(((res.body as Json).session as Json).session_id);
}

/** The stored timeline: named after the recording, beside it, the same as the route's answer. */
async function assertTimelineStored(app: BotApp, s: Store, done: Json, kind: string): Promise<Json> {
  const botName = String(done.display_name);
  const id = String(done.session_id);
  const location = String(done.timeline_file);
  const name = basename(location);
  assert.match(name, new RegExp(`^${id}_\\d{8}_\\d{6}\\.timeline\\.json$`));
  if (done.recording_file) assert.equal(name, basename(String(done.recording_file)).replace(/\.(wav|flac)$/, ".timeline.json"), "the recording's base name");
  if (kind === "local") assert.equal(dirname(location), resolve(app.recordingsDir));
  else assert.equal(location, `${PLACE}/${id}/${name}`);
  const object = await s.read(location);
  assert.equal(object.contentType, "application/json");
  const stored = JSON.parse(object.body) as Json;
  assert.equal(stored.session_id, id);
  assert.equal(stored.recording_file, done.recording_file);
  const participants = stored.participants as Json[];
  assert.deepEqual(participants.map((p) => [p.name, p.label, p.self]), [[botName, null, true], ["Ada Lovelace", "Guest", false]]);
  const speech = stored.speech as Json[];
  assert.equal(speech.length, 1);
  assert.equal(speech[0]?.participant_id, "p2");
  assert.ok(Number(speech[0]?.end) - Number(speech[0]?.start) > 0.45 && Number(speech[0]?.end) - Number(speech[0]?.start) < 0.55, JSON.stringify(speech));
  const route = await app.request("GET", `/sessions/${id}/timeline`);
  assert.equal(route.status, 200);
  assert.deepEqual(route.body, stored);
  return stored;
}

// Local on every database provider (timeline_file is a column); the remote stores on SQLite.
const cases: [kind: "local" | "azure" | "s3", provider: Provider][] = [...providers().map((p) => ["local", p] as ["local", Provider]), ["azure", "sqlite"], ["s3", "sqlite"]];
for (const [kind, provider] of cases) {
  describe(`timeline storage: ${kind} (${provider})`, { timeout: 300_000, concurrency: false }, () => {
    test("stored beside the recording; timeline_file on status and webhook; the route serves it", async (t) => {
      const s = await store(t, kind);
      const receiver = await startReceiver();
      t.after(() => receiver.close());
      const app = await startBotApp(t, { provider, bot: { WEBHOOK_URL: receiver.url }, feature: { storage: s.config, uploadRetry: FAST_RETRY } });
      const id = await join_(app, { display_name: "fake timeline", reference: `tl-${kind}` });
      await waitForSession(app, id, (x) => x.status === "recording");
      await new Promise((r) => setTimeout(r, 1_000));
      const live = await app.request("GET", `/sessions/${id}/timeline`);
      assert.equal(live.status, 200);
      assert.equal((live.body as Json).ended_at, null);
      assert.equal(((live.body as Json).participants as Json[]).length, 2);
      await app.request("POST", `/stop/${id}`);
      const done = await waitForSession(app, id, (x) => x.status === "stopped" && x.timeline_file !== null, 60_000);
      await assertTimelineStored(app, s, done, kind);
      const hook = await receiver.waitFor((e) => e.event === "finished" && e.session_id === id);
      assert.equal(hook.timeline_file, done.timeline_file);
    });
  });
}

describe("timeline without a recording, after a crash, and never admitted", { timeout: 300_000, concurrency: false }, () => {
  test("record false: a timeline named by the admission time, no recording", async (t) => {
    const app = await startBotApp(t);
    const id = await join_(app, { display_name: "fake timeline", record: false });
    const connected = await waitForSession(app, id, (x) => x.status === "connected");
    await app.request("POST", `/stop/${id}`);
    const done = await waitForSession(app, id, (x) => x.status === "stopped" && x.timeline_file !== null, 60_000);
    assert.equal(done.recording_file, null);
    const stored = await assertTimelineStored(app, await store(t, "local"), done, "local");
    const admitted = new Date(String(connected.joined_at));
    const stamp = admitted.toISOString().replace(/[-:]/g, "").replace("T", "_").slice(0, 15);
    assert.ok(String(done.timeline_file).endsWith(`${id}_${stamp}.timeline.json`), `${String(done.timeline_file)} named by ${stamp}`);
    assert.equal(stored.recording_file, null);
  });

  test("a worker that crashes mid-meeting: interrupted, with its timeline up to the crash", async (t) => {
    const app = await startBotApp(t);
    const id = await join_(app, { display_name: "fake:crash timeline" });
    const done = await waitForSession(app, id, (x) => x.status === "interrupted" && x.timeline_file !== null, 60_000);
    const stored = await assertTimelineStored(app, await store(t, "local"), done, "local");
    assert.ok(stored.ended_at);
  });

  test("never admitted: no timeline, the route answers 404", async (t) => {
    const app = await startBotApp(t);
    const id = await join_(app, { display_name: "fake:initfail" });
    const done = await waitForSession(app, id, (x) => x.status === "error", 60_000);
    assert.equal(done.timeline_file, null);
    const res = await app.request("GET", `/sessions/${id}/timeline`);
    assert.equal(res.status, 404);
    assert.ok(typeof (res.body as Json).detail === "string");
  });

  test("documented: the timeline route with its path parameter, timeline_file in the session", async (t) => {
    const app = await startBotApp(t);
    const doc = (await app.request("GET", "/openapi.json")).body as { paths: Record<string, Record<string, { parameters?: { name: string; in: string }[]; responses?: Record<string, unknown> }>> };
    const op = doc.paths["/sessions/{session_id}/timeline"]?.get;
    assert.ok(op, "GET /sessions/{session_id}/timeline documented");
    assert.deepEqual((op.parameters ?? []).filter((p) => p.in === "path").map((p) => p.name), ["session_id"]);
    assert.match(JSON.stringify(doc.paths["/status/{session_id}"]), /timeline_file/);
    assert.match(JSON.stringify(op.responses), /participant_id/);
  });
});
