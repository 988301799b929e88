import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { createLogger } from "../../shared/log/logger.ts";
import { spawnChild } from "../../shared/process/child.ts";
import { isAlive } from "../../shared/process/group.ts";
import { startPulse, type PulseDaemon } from "../../worker/audio/pulse.ts";
import { startRecorder, type RecordingFormat } from "../../worker/audio/recorder.ts";
import { dominantFrequency } from "../helpers/audio/analysis.ts";
import { survivorsMentioning } from "../helpers/audio/leftovers.ts";
import { channel, decodeToWav, readWav } from "../helpers/audio/wav.ts";
import { cleanupStack, type Defer } from "../helpers/audio/cleanup.ts";
import { holdMediaLock } from "../harness/media-lock.ts";

// Real Chromium, PulseAudio and ffmpeg: one such file at a time (see media-lock.ts).
await holdMediaLock();

const logger = createLogger({ level: process.env.LOG_LEVEL ?? "warn" });

/** A worker dir with a daemon and ffmpeg playing a 1 kHz sine into `rec`, no browser needed. */
async function withTone(defer: Defer): Promise<{ dir: string; pulse: PulseDaemon }> {
  const dir = await mkdtemp(join(tmpdir(), "media-kill-"));
  defer(() => rm(dir, { recursive: true, force: true }));
  const pulse = await startPulse({ dir, logger, mic: false });
  defer(() => pulse.stop());
  const player = spawnChild({
    command: "ffmpeg",
    args: ["-hide_banner", "-loglevel", "error", "-re", "-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=48000",
      "-f", "pulse", "-device", "rec", `tone-${dir}`],
    env: { PATH: process.env.PATH ?? "/usr/bin", ...pulse.env },
    logger,
    name: "tone",
  });
  defer(() => player.stop({ group: true, timeoutMs: 2_000 }));
  return { dir, pulse };
}

for (const format of ["wav", "flac"] as RecordingFormat[]) {
  test(`a ${format} recorder stuck on stop() is SIGKILLed and leaves a readable file`, { timeout: 60_000 }, async (t) => {
  const defer = cleanupStack(t);
    const { dir, pulse } = await withTone(defer);
    const outPath = join(dir, `out.${format}`);
    const recorder = await startRecorder({ pulseEnv: pulse.env, source: pulse.recMonitor, format, outPath, logger });
    defer(() => recorder.kill());
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    // A stopped process cannot read "q": stop() must time out and SIGKILL the group.
    process.kill(recorder.pid, "SIGSTOP");
    const { bytes, exit } = await recorder.stop({ timeoutMs: 500 });
    assert.equal(exit.signal, "SIGKILL");
    assert.equal(exit.expected, true);
    assert.ok(bytes > 10_000, `${bytes} bytes`);
    assert.equal(await isAlive(recorder.pid), false);

    const wav = await readWav(format === "flac" ? await decodeToWav(outPath) : outPath);
    assert.ok(wav.durationSec >= 1, `${wav.durationSec} s readable`);
    assert.ok(Math.abs(dominantFrequency(channel(wav, 0), wav.sampleRate, { startSec: 0.5, maxSeconds: 0.5 }) - 1000) <= 5);
    assert.deepEqual((await survivorsMentioning(outPath)), []);
  });
}

test("a recorder that dies on its own is reported as unexpected", { timeout: 60_000 }, async (t) => {
  const defer = cleanupStack(t);
  const { dir, pulse } = await withTone(defer);
  const recorder = await startRecorder({ pulseEnv: pulse.env, source: pulse.recMonitor, format: "wav", outPath: join(dir, "x.wav"), logger: createLogger({ level: "silent" }) });
  defer(() => recorder.kill());
  process.kill(recorder.pid, "SIGKILL");
  const exit = await recorder.exited;
  assert.equal(exit.expected, false);
  assert.equal(exit.signal, "SIGKILL");
});

test("a recorder on a missing source fails to start with ffmpeg's reason", { timeout: 60_000 }, async (t) => {
  const defer = cleanupStack(t);
  const { dir, pulse } = await withTone(defer);
  await assert.rejects(
    startRecorder({ pulseEnv: pulse.env, source: "nosuch.monitor", format: "wav", outPath: join(dir, "y.wav"), logger: createLogger({ level: "silent" }) }),
    /ffmpeg did not open pulse source nosuch\.monitor \(exited\)/,
  );
});
