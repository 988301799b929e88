/**
 * Issue #15 "a failed `stored` journal write never deletes the only copy": the session's journal
 * cannot be written (here: its folder is gone, as on a broken or full disk), the upload to the
 * object store succeeds, and the local recording stays, because no journal says where it went.
 * Before: the local copy was deleted after the upload whatever the journal said. Real s3rver,
 * real SQLite, the real finalizeSession.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { createNotifier } from "../../control/bot/notifier.ts";
import { SessionRepo } from "../../control/bot/session-repo.ts";
import { finalizeSession } from "../../control/bot/supervisor/finalize.ts";
import { openDatabase } from "../../control/db/client.ts";
import { createRecordingStore } from "../../control/storage/index.ts";
import { createLogger } from "../../shared/log/logger.ts";
import { freshDatabase } from "../harness/databases.ts";
import { freePort, S3RVER_KEY, startS3rver } from "../storage/emulators.ts";

const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
process.env.AWS_ACCESS_KEY_ID = S3RVER_KEY;
process.env.AWS_SECRET_ACCESS_KEY = S3RVER_KEY;
after(() => {
  for (const [k, v] of [["AWS_ACCESS_KEY_ID", saved.id], ["AWS_SECRET_ACCESS_KEY", saved.secret]] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

test("an upload whose `stored` record cannot be journalled keeps the local copy", { timeout: 60_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "i15-stored-"));
  const port = await freePort();
  const s3 = await startS3rver(port, join(dir, "s3rver"), ["recordings"]);
  t.after(() => s3.stop());
  const database = await freshDatabase("sqlite");
  t.after(() => database.drop());
  const logger = createLogger({ level: "silent" });
  const db = await openDatabase(database.url, logger);
  t.after(() => db.close());
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const repo = new SessionRepo(db.db);
  const id = randomUUID();
  await repo.create({ id, meetingUrl: "https://teams.microsoft.com/meet/1", reference: null, displayName: "Bot", record: true, format: "wav", createdAt: new Date() });
  const recording = join(dir, "recording.wav");
  execFileSync("ffmpeg", ["-loglevel", "error", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=1", "-ac", "2", "-c:a", "pcm_s16le", "-y", recording]);
  const store = createRecordingStore({ backend: "s3", bucket: "recordings", region: "us-east-1", endpoint: `http://127.0.0.1:${port}`, forcePathStyle: true }, { recordingsDir: dir, logger });
  const notifier = createNotifier({ events: false, dir: join(dir, ".webhooks"), logger });
  await finalizeSession({ repo, store, notifier, logger, now: () => new Date() }, {
    sessionId: id,
    reference: null,
    format: "wav",
    status: "stopped",
    previous: "recording",
    endReason: "stopped_by_api",
    errorMessage: null,
    recordingPath: recording,
    needsRepair: false,
    startedAt: new Date(),
    journalPath: join(dir, "gone", `${id}.journal`),
    cleanup: [],
  });
  const row = await repo.find(id);
  assert.equal(row?.status, "stopped");
  assert.match(String(row?.recordingFile), new RegExp(`recordings/${id}/`), "uploaded");
  assert.ok(existsSync(recording), "the local copy stays: no journal records the upload");
});
