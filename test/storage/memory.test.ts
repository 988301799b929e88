// Memory while uploading a large recording: the stores must stream from disk, not buffer the file.
// Prints the measured RSS growth as TAP diagnostics; asserts only a loose ceiling (machine is shared).
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { execFile } from "node:child_process";
import { createReadStream } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { Readable } from "node:stream";
import { test, type TestContext } from "node:test";
import { GetObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { BlobServiceClient } from "@azure/storage-blob";
import { createRecordingStore } from "../../control/storage/create-store.ts";
import type { RecordingStore } from "../../control/storage/recording-store.ts";
import { storeRecording } from "../../control/storage/store-recording.ts";
import {
  azuriteConnectionString,
  capturingLogger,
  freePort,
  S3RVER_KEY,
  startAzurite,
  startS3rverProcess,
  tempDir,
} from "./emulators.ts";

const run = promisify(execFile);
const MIB = 1024 * 1024;
const FILE_MIB = 200;

/**
 * Writes FILE_MIB of random bytes from a child process (so generating it does not raise this
 * process's RSS before the measurement) and returns its SHA-256.
 */
async function makeLargeFile(path: string): Promise<string> {
  await run("sh", ["-c", 'head -c "$1" /dev/urandom > "$2"', "sh", String(FILE_MIB * MIB), path]);
  return sha256(createReadStream(path, { highWaterMark: 64 * 1024 }));
}

async function sha256(stream: NodeJS.ReadableStream): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of stream) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/** Uploads while sampling RSS every 50 ms; returns the peak growth over the starting RSS in MiB. */
async function measureUpload(t: TestContext, store: RecordingStore, localPath: string, sessionId: string): Promise<string> {
  const { logger } = capturingLogger();
  globalThis.gc?.();
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 50);
  const started = performance.now();
  try {
    const fileName = `${sessionId}_20250101_000000.wav`;
    const stored = await storeRecording(store, { localPath, sessionId, reference: null, fileName, contentType: "audio/wav" }, { logger });
    assert.equal(stored.localDeleted, true);
  } finally {
    clearInterval(sampler);
  }
  const growthMiB = (peak - baseline) / MIB;
  t.diagnostic(
    `${store.kind}: ${FILE_MIB} MiB upload, rss baseline ${(baseline / MIB).toFixed(0)} MiB, peak ${(peak / MIB).toFixed(0)} MiB, ` +
      `growth ${growthMiB.toFixed(0)} MiB, ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  // Loose: buffering the whole file would grow RSS by at least its size.
  assert.ok(growthMiB < FILE_MIB * 0.75, `rss grew by ${growthMiB.toFixed(0)} MiB for a ${FILE_MIB} MiB file`);
  return `${sessionId}/${sessionId}_20250101_000000.wav`;
}

test(`azure streams a ${FILE_MIB} MiB file in blocks`, async (t) => {
  const dir = await tempDir(t, "mem-azure");
  const port = await freePort();
  const azurite = await startAzurite(port, join(dir, "azurite"));
  t.after(() => azurite.stop());
  const service = BlobServiceClient.fromConnectionString(azuriteConnectionString(port));
  await service.getContainerClient("recordings").create();
  const localPath = join(dir, "large.wav");
  const digest = await makeLargeFile(localPath);
  const { logger } = capturingLogger();
  const store = createRecordingStore(
    { backend: "azure", connectionString: azuriteConnectionString(port), container: "recordings" },
    { recordingsDir: dir, logger },
  );
  const key = await measureUpload(t, store, localPath, "big-azure");
  const download = await service.getContainerClient("recordings").getBlockBlobClient(key).download();
  assert.ok(download.readableStreamBody);
  assert.equal(await sha256(download.readableStreamBody), digest);
});

test(`s3 streams a ${FILE_MIB} MiB file as a multipart upload`, async (t) => {
  const saved = [process.env.AWS_ACCESS_KEY_ID, process.env.AWS_SECRET_ACCESS_KEY];
  process.env.AWS_ACCESS_KEY_ID = S3RVER_KEY;
  process.env.AWS_SECRET_ACCESS_KEY = S3RVER_KEY;
  t.after(() => {
    for (const [key, value] of [["AWS_ACCESS_KEY_ID", saved[0]], ["AWS_SECRET_ACCESS_KEY", saved[1]]] as const) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });
  const dir = await tempDir(t, "mem-s3");
  const port = await freePort();
  const server = await startS3rverProcess(port, join(dir, "s3rver"), "recordings");
  t.after(() => server.stop());
  const localPath = join(dir, "large.wav");
  const digest = await makeLargeFile(localPath);
  const { logger } = capturingLogger();
  const endpoint = `http://127.0.0.1:${port}`;
  const store = createRecordingStore(
    { backend: "s3", bucket: "recordings", region: "us-east-1", endpoint, forcePathStyle: true },
    { recordingsDir: dir, logger },
  );
  const key = await measureUpload(t, store, localPath, "big-s3");
  const client = new S3Client({ region: "us-east-1", endpoint, forcePathStyle: true });
  t.after(() => client.destroy());
  const object = await client.send(new GetObjectCommand({ Bucket: "recordings", Key: key }));
  assert.ok(object.Body instanceof Readable);
  assert.equal(await sha256(object.Body), digest);
});

