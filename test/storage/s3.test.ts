// S3 backend against a real s3rver on a free loopback port (credentials via the standard AWS env chain).
import assert from "node:assert/strict";
import { access, readFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { test, type TestContext } from "node:test";
import { GetObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { parseStorageConfig } from "../../control/storage/config.ts";
import { createRecordingStore } from "../../control/storage/create-store.ts";
import { recordingFileName } from "../../control/storage/recording-file-name.ts";
import { StorageError } from "../../control/storage/storage-error.ts";
import { storeRecording } from "../../control/storage/store-recording.ts";
import { capturingLogger, freePort, makeTone, S3RVER_KEY, startS3rver, tempDir } from "./emulators.ts";

const BUCKET = "recordings";
const STARTED = new Date(Date.UTC(2025, 11, 31, 23, 59, 58));

/** The AWS chain reads these when a client first signs; set them for the duration of one test. */
function useAwsKeys(t: TestContext, id: string, secret: string): void {
  const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
  process.env.AWS_ACCESS_KEY_ID = id;
  process.env.AWS_SECRET_ACCESS_KEY = secret;
  t.after(() => {
    restore("AWS_ACCESS_KEY_ID", saved.id);
    restore("AWS_SECRET_ACCESS_KEY", saved.secret);
  });
}

function restore(key: string, value: string | undefined): void {
  if (value === undefined) delete process.env[key];
  else process.env[key] = value;
}

function s3Store(port: number, recordingsDir: string, bucket = BUCKET) {
  const config = parseStorageConfig({
    STORAGE_BACKEND: "s3",
    S3_BUCKET: bucket,
    S3_REGION: "us-east-1",
    S3_ENDPOINT: `http://127.0.0.1:${port}`,
    S3_FORCE_PATH_STYLE: "true",
  });
  const { logger, lines } = capturingLogger();
  return { store: createRecordingStore(config, { recordingsDir, logger }), logger, lines };
}

function reader(port: number): S3Client {
  return new S3Client({
    region: "us-east-1",
    endpoint: `http://127.0.0.1:${port}`,
    forcePathStyle: true,
    credentials: { accessKeyId: S3RVER_KEY, secretAccessKey: S3RVER_KEY },
  });
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(() => true, () => false);
}

test("s3 backend", async (t) => {
  useAwsKeys(t, S3RVER_KEY, S3RVER_KEY);
  const dir = await tempDir(t, "s3");
  const port = await freePort();
  const server = await startS3rver(port, join(dir, "s3rver"), [BUCKET]);
  t.after(() => server.stop());
  const client = reader(port);
  t.after(() => client.destroy());

  for (const [ext, contentType] of [["wav", "audio/wav"], ["flac", "audio/flac"]] as const) {
    await t.test(`uploads a ${ext} file with its name, type and metadata, then deletes the local copy`, async () => {
      const sessionId = `sess-${ext}`;
      const localPath = await makeTone(dir, `tmp-${ext}.${ext}`);
      const original = await readFile(localPath);
      const fileName = recordingFileName(sessionId, STARTED, contentType);
      assert.equal(fileName, `${sessionId}_20251231_235958.${ext}`);
      const { store, logger } = s3Store(port, dir);

      const reference = "Réunion 週次 / weekly";
      const stored = await storeRecording(store, { localPath, sessionId, reference, fileName, contentType }, { logger });

      assert.deepEqual(stored, { location: `${BUCKET}/${sessionId}/${fileName}`, localDeleted: true });
      assert.equal(await exists(localPath), false);
      const object = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: `${sessionId}/${fileName}` }));
      assert.equal(object.ContentType, contentType);
      assert.equal(decodeURIComponent(object.Metadata?.reference ?? ""), reference);
      assert.equal(object.Metadata?.session_id, sessionId);
      assert.deepEqual(Buffer.from((await object.Body?.transformToByteArray()) ?? []), original);
    });
  }

  await t.test("a wrong access key is a permanent error naming the setting, and the local file stays", async (t) => {
    useAwsKeys(t, "WRONGKEY", "wrong-secret");
    const { store, logger } = s3Store(port, dir);
    const localPath = await makeTone(dir, "badkey.wav");
    const input = { localPath, sessionId: "badkey", reference: null, fileName: "badkey_20251231_235958.wav", contentType: "audio/wav" as const };
    await assert.rejects(storeRecording(store, input, { logger, minDelayMs: 10 }), (error: unknown) => {
      assert.ok(error instanceof StorageError);
      assert.equal(error.permanent, true);
      assert.equal(error.code, "auth");
      assert.match(error.message, /authentication failed \(InvalidAccessKeyId, HTTP 403\) — check AWS_ACCESS_KEY_ID/);
      return true;
    });
    assert.equal(await exists(localPath), true);
    await assert.rejects(store.check(), /authentication failed/);
  });

  await t.test("a missing bucket is a permanent error naming the setting", async () => {
    const { store, logger } = s3Store(port, dir, "no-such-bucket");
    const localPath = await makeTone(dir, "nobucket.wav");
    const input = { localPath, sessionId: "nb", reference: null, fileName: "nb_20251231_235958.wav", contentType: "audio/wav" as const };
    await assert.rejects(storeRecording(store, input, { logger, minDelayMs: 10 }), (error: unknown) => {
      assert.ok(error instanceof StorageError && error.permanent && error.code === "not_found");
      assert.match(error.message, /bucket "no-such-bucket" does not exist .*S3_BUCKET/);
      return true;
    });
    assert.equal(await exists(localPath), true);
    await assert.rejects(store.check(), /does not exist/);
  });

  await t.test("a missing local file is a permanent error", async () => {
    const { store, logger } = s3Store(port, dir);
    const input = { localPath: join(dir, "gone.wav"), sessionId: "gone", reference: null, fileName: "gone_20251231_235958.wav", contentType: "audio/wav" as const };
    await assert.rejects(storeRecording(store, input, { logger }), { name: "StorageError", code: "local_file", permanent: true });
  });

  await t.test("check() passes when the server is up", async () => {
    await s3Store(port, dir).store.check();
  });
});

test("s3: an upload started before the server exists succeeds once it starts", async (t) => {
  useAwsKeys(t, S3RVER_KEY, S3RVER_KEY);
  const dir = await tempDir(t, "s3-outage");
  const port = await freePort();
  const { store, logger, lines } = s3Store(port, dir);
  await assert.rejects(store.check(), (error: unknown) => {
    assert.ok(error instanceof StorageError && error.code === "unreachable" && !error.permanent);
    assert.match(error.message, /unreachable: ECONNREFUSED/);
    return true;
  });

  const localPath = await makeTone(dir, "outage.wav");
  const original = await readFile(localPath);
  const fileName = recordingFileName("outage", STARTED, "audio/wav");
  const input = { localPath, sessionId: "outage", reference: null, fileName, contentType: "audio/wav" as const };
  const pending = storeRecording(store, input, { logger, minDelayMs: 200, maxDelayMs: 1_000 });

  await sleep(2_500);
  assert.equal(await exists(localPath), true, "the local copy stays while the store is down");
  const server = await startS3rver(port, join(dir, "s3rver"), [BUCKET]);
  t.after(() => server.stop());

  assert.equal((await pending).location, `${BUCKET}/outage/${fileName}`);
  assert.equal(await exists(localPath), false);
  assert.ok(lines.some((line) => line.msg === "recording upload failed; retrying"));
  const client = reader(port);
  t.after(() => client.destroy());
  const object = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: `outage/${fileName}` }));
  assert.deepEqual(Buffer.from((await object.Body?.transformToByteArray()) ?? []), original);
});

test("s3: an abort stops the retries and keeps the local file", async (t) => {
  useAwsKeys(t, S3RVER_KEY, S3RVER_KEY);
  const dir = await tempDir(t, "s3-abort");
  const { store, logger } = s3Store(await freePort(), dir);
  const localPath = await makeTone(dir, "abort.wav");
  const input = { localPath, sessionId: "abort", reference: null, fileName: "abort_20251231_235958.wav", contentType: "audio/wav" as const };
  const controller = new AbortController();
  const pending = storeRecording(store, input, { logger, signal: controller.signal, minDelayMs: 100, maxDelayMs: 200 });
  await sleep(500);
  controller.abort();
  await assert.rejects(pending, (error: unknown) => {
    assert.ok(error instanceof StorageError && error.code === "aborted" && !error.permanent);
    assert.match(error.message, /the recording stays at .*abort\.wav/);
    return true;
  });
  assert.equal(await exists(localPath), true);
});
