// Local backend: recordings are moved into RECORDINGS_DIR under their final name, atomically.
import assert from "node:assert/strict";
import { readFile, readdir, writeFile } from "node:fs/promises";
import { isAbsolute, join, relative } from "node:path";
import { test } from "node:test";
import { parseStorageConfig } from "../../control/storage/config.ts";
import { createRecordingStore } from "../../control/storage/create-store.ts";
import { storeRecording } from "../../control/storage/store-recording.ts";
import { capturingLogger, makeTone, tempDir } from "./emulators.ts";

test("local store moves the file to RECORDINGS_DIR/<fileName> and keeps it", async (t) => {
  const dir = await tempDir(t, "local");
  const recordingsDir = join(dir, "recordings");
  const { logger } = capturingLogger();
  const store = createRecordingStore(parseStorageConfig({}), { recordingsDir: relative(process.cwd(), recordingsDir), logger });
  assert.equal(store.kind, "local");
  await store.check(); // creates the directory

  const localPath = await makeTone(recordingsDir, ".s1.partial.wav");
  const original = await readFile(localPath);
  const fileName = "s1_20250101_120000.wav";
  const input = { localPath, sessionId: "s1", reference: "ref", fileName, contentType: "audio/wav" as const };
  const stored = await storeRecording(store, input, { logger });

  const target = join(recordingsDir, fileName);
  assert.deepEqual(stored, { location: target, localDeleted: false });
  assert.ok(isAbsolute(stored.location), "location is absolute even for a relative RECORDINGS_DIR");
  assert.deepEqual(await readdir(recordingsDir), [fileName]);
  assert.deepEqual(await readFile(target), original);

  // A retry after the move already happened succeeds without touching the file.
  assert.deepEqual(await store.store(input), { location: target, deleteLocal: false });
  // Already at its final name: nothing to do.
  assert.deepEqual(await store.store({ ...input, localPath: target }), { location: target, deleteLocal: false });
});

test("local store refuses names that would leave RECORDINGS_DIR", async (t) => {
  const dir = await tempDir(t, "local-unsafe");
  const { logger } = capturingLogger();
  const store = createRecordingStore({ backend: "local" }, { recordingsDir: dir, logger });
  const localPath = join(dir, "x.wav");
  await writeFile(localPath, "x");
  const input = { localPath, sessionId: "s", reference: null, contentType: "audio/wav" as const };
  await assert.rejects(store.store({ ...input, fileName: "../escape.wav" }), /not a plain file name/);
  await assert.rejects(store.store({ ...input, sessionId: "a/b", fileName: "s.wav" }), /cannot be used in a file name/);
});

test("local check() fails when RECORDINGS_DIR cannot be a directory", async (t) => {
  const dir = await tempDir(t, "local-check");
  const blocker = join(dir, "file");
  await writeFile(blocker, "not a directory");
  const { logger } = capturingLogger();
  const store = createRecordingStore({ backend: "local" }, { recordingsDir: join(blocker, "recordings"), logger });
  await assert.rejects(store.check(), /RECORDINGS_DIR .*file\/recordings is not a writable directory/);
  await assert.rejects(
    storeRecording(store, { localPath: join(dir, "missing.wav"), sessionId: "m", reference: null, fileName: "m.wav", contentType: "audio/wav" }, { logger }),
    { name: "StorageError", permanent: true },
  );
});

test("storeRecording does not retry an unsafe name", async (t) => {
  const dir = await tempDir(t, "local-unsafe-retry");
  const { logger } = capturingLogger();
  const store = createRecordingStore({ backend: "local" }, { recordingsDir: dir, logger });
  const input = { localPath: join(dir, "x.wav"), sessionId: "s", reference: null, fileName: "../x.wav", contentType: "audio/wav" as const };
  await assert.rejects(storeRecording(store, input, { logger }), { name: "StorageError", code: "invalid_input", permanent: true });
});
