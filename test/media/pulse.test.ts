import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { createLogger } from "../../shared/log/logger.ts";
import { isAlive } from "../../shared/process/group.ts";
import { startPulse } from "../../worker/audio/pulse.ts";
import { survivorsMentioning } from "../helpers/audio/leftovers.ts";
import { cleanupStack } from "../helpers/audio/cleanup.ts";

const logger = createLogger({ level: process.env.LOG_LEVEL ?? "warn" });

function shortList(text: string): string[] {
  return text.split("\n").filter(Boolean).map((l) => `${l.split("\t")[1]} ${l.split("\t")[3]}`);
}

test("a daemon without mic has the 48 kHz stereo rec sink and no source but its monitor", async (t) => {
  const defer = cleanupStack(t);
  const dir = await mkdtemp(join(tmpdir(), "media-pulse-"));
  defer(() => rm(dir, { recursive: true, force: true }));
  const pulse = await startPulse({ dir, logger, mic: false });
  defer(() => pulse.stop());

  assert.deepEqual(shortList(await pulse.pactl(["list", "short", "sinks"])), ["rec s16le 2ch 48000Hz"]);
  assert.deepEqual(shortList(await pulse.pactl(["list", "short", "sources"])), ["rec.monitor s16le 2ch 48000Hz"]);
  assert.match(await pulse.pactl(["info"]), /Default Sink: rec\n/);
  assert.equal(pulse.micSink, undefined);
  assert.equal(pulse.env.PULSE_SOURCE, undefined);
  assert.equal(pulse.env.PULSE_SERVER, `unix:${dir}/run/native`);
  assert.equal(pulse.env.HOME, join(dir, "home"));

  await pulse.stop();
  assert.equal(await isAlive(pulse.pid), false);
  assert.deepEqual(await survivorsMentioning(dir), []);
});

test("a daemon with mic adds the mono mic sink and the micsrc remap as default source", async (t) => {
  const defer = cleanupStack(t);
  const dir = await mkdtemp(join(tmpdir(), "media-pulse-"));
  defer(() => rm(dir, { recursive: true, force: true }));
  const pulse = await startPulse({ dir, logger, mic: true });
  defer(() => pulse.stop());

  assert.deepEqual(shortList(await pulse.pactl(["list", "short", "sinks"])).sort(), [
    "mic s16le 1ch 48000Hz",
    "rec s16le 2ch 48000Hz",
  ]);
  const sources = shortList(await pulse.pactl(["list", "short", "sources"])).map((s) => s.split(" ")[0]);
  assert.deepEqual(sources.sort(), ["mic.monitor", "micsrc", "rec.monitor"]);
  assert.match(await pulse.pactl(["info"]), /Default Source: micsrc\n/);
  assert.equal(pulse.micSink, "mic");
  assert.equal(pulse.env.PULSE_SOURCE, "micsrc");

  await pulse.stop();
  await pulse.stop(); // idempotent
  assert.deepEqual(await survivorsMentioning(dir), []);
});

test("two daemons run side by side, each in its own directory", async (t) => {
  const defer = cleanupStack(t);
  const dirs = await Promise.all([0, 1].map(() => mkdtemp(join(tmpdir(), "media-pulse-"))));
  defer(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));
  const daemons = await Promise.all(dirs.map((dir) => startPulse({ dir, logger, mic: false })));
  defer(() => Promise.all(daemons.map((d) => d.stop())));
  assert.notEqual(daemons[0]?.pid, daemons[1]?.pid);
  // A daemon that crashes is observable: the worker turns this into an error status.
  const victim = daemons[0];
  assert.ok(victim);
  process.kill(victim.pid, "SIGKILL");
  assert.equal((await victim.exited).signal, "SIGKILL");
  assert.match(await daemons[1]!.pactl(["info"]), /Default Sink: rec/);
});
