// Azure backend against a real Azurite process on a free loopback port.
import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import { access, readFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { test } from "node:test";
import { BlobServiceClient } from "@azure/storage-blob";
import { parseStorageConfig } from "../../control/storage/config.ts";
import { createRecordingStore } from "../../control/storage/create-store.ts";
import { recordingFileName } from "../../control/storage/recording-file-name.ts";
import type { RecordingContentType } from "../../control/storage/recording-store.ts";
import { StorageError } from "../../control/storage/storage-error.ts";
import { storeRecording } from "../../control/storage/store-recording.ts";
import { uploadWithRetry } from "../../control/storage/upload-with-retry.ts";
import { azuriteConnectionString, capturingLogger, freePort, makeTone, outageProxy, startAzurite, tempDir } from "./emulators.ts";

const CONTAINER = "recordings";
const STARTED = new Date(Date.UTC(2025, 2, 7, 9, 5, 3));

function azureStore(port: number, recordingsDir: string, key?: string, container = CONTAINER) {
  const config = parseStorageConfig({
    STORAGE_BACKEND: "azure",
    AZURE_STORAGE_CONNECTION_STRING: azuriteConnectionString(port, key),
    AZURE_STORAGE_CONTAINER: container,
  });
  const { logger, lines } = capturingLogger();
  return { store: createRecordingStore(config, { recordingsDir, logger }), logger, lines };
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(() => true, () => false);
}

test("azure backend", async (t) => {
  const dir = await tempDir(t, "azure");
  const port = await freePort();
  const azurite = await startAzurite(port, join(dir, "azurite"));
  t.after(() => azurite.stop());
  const service = BlobServiceClient.fromConnectionString(azuriteConnectionString(port));
  await service.getContainerClient(CONTAINER).create();

  for (const [ext, contentType] of [["wav", "audio/wav"], ["flac", "audio/flac"]] as const) {
    await t.test(`uploads a ${ext} file with its name, type and metadata, then deletes the local copy`, async () => {
      const sessionId = `sess-${ext}`;
      const localPath = await makeTone(dir, `tmp-${ext}.${ext}`);
      const original = await readFile(localPath);
      const fileName = recordingFileName(sessionId, STARTED, contentType as RecordingContentType);
      assert.equal(fileName, `${sessionId}_20250307_090503.${ext}`);
      const { store, logger } = azureStore(port, dir);

      const reference = "Réunion 週次 / weekly";
      const stored = await storeRecording(store, { localPath, sessionId, reference, fileName, contentType }, { logger });

      assert.deepEqual(stored, { location: `${CONTAINER}/${sessionId}/${fileName}`, localDeleted: true });
      assert.equal(await exists(localPath), false);
      const blob = service.getContainerClient(CONTAINER).getBlockBlobClient(`${sessionId}/${fileName}`);
      const properties = await blob.getProperties();
      assert.equal(properties.contentType, contentType);
      assert.equal(decodeURIComponent(properties.metadata?.reference ?? ""), reference);
      assert.equal(decodeURIComponent(properties.metadata?.session_id ?? ""), sessionId);
      assert.deepEqual(await blob.downloadToBuffer(), original);
    });
  }

  await t.test("a null reference uploads without reference metadata", async () => {
    const localPath = await makeTone(dir, "noref.wav");
    const { store, logger } = azureStore(port, dir);
    const fileName = recordingFileName("noref", STARTED, "audio/wav");
    await storeRecording(store, { localPath, sessionId: "noref", reference: null, fileName, contentType: "audio/wav" }, { logger });
    const properties = await service.getContainerClient(CONTAINER).getBlockBlobClient(`noref/${fileName}`).getProperties();
    assert.deepEqual(properties.metadata, { session_id: "noref" });
  });

  await t.test("a wrong account key is a permanent error naming the setting, and the local file stays", async () => {
    const localPath = await makeTone(dir, "badkey.wav");
    const wrongKey = Buffer.alloc(64, 1).toString("base64");
    const { store, logger } = azureStore(port, dir, wrongKey);
    const input = { localPath, sessionId: "badkey", reference: null, fileName: "badkey_20250307_090503.wav", contentType: "audio/wav" as const };
    await assert.rejects(storeRecording(store, input, { logger, minDelayMs: 10 }), (error: unknown) => {
      assert.ok(error instanceof StorageError);
      assert.equal(error.permanent, true);
      assert.equal(error.code, "auth");
      assert.match(error.message, /authentication failed .*check AZURE_STORAGE_CONNECTION_STRING/);
      assert.doesNotMatch(error.message, new RegExp(wrongKey.slice(0, 20)));
      return true;
    });
    assert.equal(await exists(localPath), true);
    await assert.rejects(store.check(), /authentication failed/);
  });

  await t.test("a missing container is a permanent error naming the setting", async () => {
    const localPath = await makeTone(dir, "nocontainer.wav");
    const { store, logger } = azureStore(port, dir, undefined, "no-such-container");
    const input = { localPath, sessionId: "nc", reference: null, fileName: "nc_20250307_090503.wav", contentType: "audio/wav" as const };
    await assert.rejects(storeRecording(store, input, { logger, minDelayMs: 10 }), (error: unknown) => {
      assert.ok(error instanceof StorageError && error.permanent && error.code === "not_found");
      assert.match(error.message, /"no-such-container" does not exist .*AZURE_STORAGE_CONTAINER/);
      return true;
    });
    assert.equal(await exists(localPath), true);
    await assert.rejects(store.check(), /does not exist/);
  });

  await t.test("check() passes when Azurite is up", async () => {
    await azureStore(port, dir).store.check();
  });
});

test("azure: an upload started while the store is down succeeds once it is back", async (t) => {
  const dir = await tempDir(t, "azure-outage");
  // Azurite keeps running with its container; the store's port goes down and comes back.
  const azurite = await startAzurite(await freePort(), join(dir, "azurite"));
  t.after(() => azurite.stop());
  const proxy = await outageProxy(azurite.port);
  t.after(() => proxy.down());
  const port = proxy.port;
  const service = BlobServiceClient.fromConnectionString(azuriteConnectionString(azurite.port));
  await service.getContainerClient(CONTAINER).create();

  const { store, logger, lines } = azureStore(port, dir);
  await assert.rejects(store.check(), (error: unknown) => {
    assert.ok(error instanceof StorageError && error.code === "unreachable");
    assert.match(error.message, /unreachable: .*ECONNREFUSED/);
    return true;
  });

  const localPath = await makeTone(dir, "outage.flac");
  const original = await readFile(localPath);
  const fileName = recordingFileName("outage", STARTED, "audio/flac");
  const input = { localPath, sessionId: "outage", reference: "r1", fileName, contentType: "audio/flac" as const };
  const pending = storeRecording(store, input, { logger, minDelayMs: 200, maxDelayMs: 1_000 });

  await sleep(2_500);
  assert.equal(await exists(localPath), true, "the local copy stays while the store is down");
  await proxy.up();

  const stored = await pending;
  assert.equal(stored.location, `${CONTAINER}/outage/${fileName}`);
  assert.equal(await exists(localPath), false);
  assert.ok(lines.some((line) => line.msg === "recording upload failed; retrying"));
  const blob = service.getContainerClient(CONTAINER).getBlockBlobClient(`outage/${fileName}`);
  assert.deepEqual(await blob.downloadToBuffer(), original);
});

test("azure: retries during a long outage leave no listener behind on the caller's signal", async (t) => {
  const dir = await tempDir(t, "azure-listeners");
  const port = await freePort();
  const { store, logger, lines } = azureStore(port, dir);
  const localPath = await makeTone(dir, "listeners.wav");
  const input = { localPath, sessionId: "listeners", reference: null, fileName: "listeners_20250307_090503.wav", contentType: "audio/wav" as const };
  const controller = new AbortController();
  const counts: number[] = [];
  const pending = uploadWithRetry(store, input, { logger, signal: controller.signal, minDelayMs: 10, maxDelayMs: 20 });
  while (lines.filter((line) => line.msg === "recording upload failed; retrying").length < 15) {
    counts.push(getEventListeners(controller.signal, "abort").length);
    await sleep(20);
  }
  controller.abort();
  await assert.rejects(pending, (error: unknown) => error instanceof StorageError && error.code === "aborted");
  assert.ok(Math.max(...counts) <= 2, `listeners on the caller's signal: ${counts.join(",")}`);
  assert.equal(await exists(localPath), true);
});
