import assert from "node:assert/strict";
import { stat } from "node:fs/promises";
import { test } from "node:test";
import { createLogger } from "../../shared/log/logger.ts";
import { launchBrowser } from "../../worker/browser/launch.ts";
import { survivorsMentioning } from "../helpers/audio/leftovers.ts";
import { daemonInTempDir } from "../helpers/audio/daemon-dir.ts";
import { holdMediaLock } from "../harness/media-lock.ts";

// Real Chromium, PulseAudio and ffmpeg: one such file at a time (see media-lock.ts).
await holdMediaLock();

const logger = createLogger({ level: process.env.LOG_LEVEL ?? "silent" });

/**
 * A hung browser (every process stopped, so CDP never answers) must still be gone after
 * close(): the bounded context close gives up and the group is SIGKILLed. A crash is observable
 * through `closed` before anyone calls close().
 */
test("close() kills a hung Chromium; a crash resolves closed as unexpected", { timeout: 120_000 }, async (t) => {
  const { dir, pulse, defer } = await daemonInTempDir(t, "media-close-", logger);

  const hung = await launchBrowser({ dir, pulseEnv: pulse.env, logger, mic: false, closeTimeoutMs: 1_000 });
  defer(() => hung.close());
  process.kill(-hung.pid, "SIGSTOP");
  await hung.close();
  assert.deepEqual(await survivorsMentioning(hung.userDataDir), []);
  await assert.rejects(stat(hung.userDataDir), { code: "ENOENT" });
  assert.deepEqual(await hung.closed, { expected: true });

  const crashing = await launchBrowser({ dir, pulseEnv: pulse.env, logger, mic: false });
  defer(() => crashing.close());
  process.kill(crashing.pid, "SIGKILL");
  assert.deepEqual(await crashing.closed, { expected: false });
  await crashing.close();
  await pulse.stop();
  assert.deepEqual(await survivorsMentioning(dir), []);
});
