import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { createLogger } from "../../shared/log/logger.ts";
import { spawnChild } from "../../shared/process/child.ts";
import { isAlive } from "../../shared/process/group.ts";
import { startPulse, type PulseDaemon } from "../../worker/audio/pulse.ts";
import { launchBrowser, type BrowserHandle } from "../../worker/browser/launch.ts";
import { survivorsMentioning } from "../helpers/audio/leftovers.ts";
import { startTonePage, type TonePageServer } from "../helpers/audio/tone-page.ts";
import { cleanupStack, type Defer } from "../helpers/audio/cleanup.ts";
import { holdMediaLock } from "../harness/media-lock.ts";

// Real Chromium, PulseAudio and ffmpeg: one such file at a time (see media-lock.ts).
await holdMediaLock();

const logger = createLogger({ level: process.env.LOG_LEVEL ?? "warn" });

interface Device {
  kind: string;
  label: string;
}

async function worker(defer: Defer, mic: boolean, page: TonePageServer): Promise<{ dir: string; pulse: PulseDaemon; browser: BrowserHandle }> {
  const dir = await mkdtemp(join(tmpdir(), `media-mic-${mic}-`));
  defer(() => rm(dir, { recursive: true, force: true }));
  const pulse = await startPulse({ dir, logger, mic });
  defer(() => pulse.stop());
  const browser = await launchBrowser({ dir, pulseEnv: pulse.env, logger, mic });
  defer(() => browser.close());
  await browser.page.goto(page.url);
  return { dir, pulse, browser };
}

test("with mic, audio written into the mic sink reaches getUserMedia unprocessed", { timeout: 120_000 }, async (t) => {
  const defer = cleanupStack(t);
  const page = await startTonePage();
  defer(() => page.close());
  const { dir, pulse, browser } = await worker(defer, true, page);
  t.diagnostic(`mic true: launch ${Math.round(browser.launchMs)} ms, PSS ${Math.round((await browser.pss()) / 2 ** 20)} MiB`);

  const devices = (await browser.page.evaluate("listDevices()")) as Device[];
  assert.ok(devices.some((d) => d.kind === "audioinput" && d.label === "micsrc"), JSON.stringify(devices));

  // What the bot "says": a 1 kHz sine played into the worker's mic sink. lavfi's sine has
  // amplitude 1/8, halved here: RMS 0.125 / 2 / √2 ≈ 0.044 if it arrives untouched.
  const player = spawnChild({
    command: "ffmpeg",
    args: ["-hide_banner", "-loglevel", "error", "-re", "-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=48000",
      "-af", "volume=0.5", "-f", "pulse", "-device", "mic", `speech-${dir}`],
    env: { PATH: process.env.PATH ?? "/usr/bin", ...pulse.env },
    logger,
    name: "mic-player",
  });
  defer(() => player.stop({ group: true, timeoutMs: 2_000 }));

  const level = (await browser.page.evaluate("micLevel(3000)")) as { rms: number; peakHz: number };
  t.diagnostic(`mic in page: rms ${level.rms.toFixed(3)}, peak ${level.peakHz.toFixed(0)} Hz`);
  assert.ok(level.rms > 0.03 && level.rms < 0.06, `mic RMS ${level.rms}, expected ~0.044`);
  assert.ok(Math.abs(level.peakHz - 1000) <= 12, `peak at ${level.peakHz} Hz`);

  await player.stop({ group: true, timeoutMs: 2_000 });
  await browser.close();
  await pulse.stop();
  assert.equal(await isAlive(browser.pid), false);
  assert.deepEqual(await survivorsMentioning(dir), []);
});

test("without mic, the page sees no capture device and getUserMedia fails", { timeout: 120_000 }, async (t) => {
  const defer = cleanupStack(t);
  const page = await startTonePage();
  defer(() => page.close());
  const { dir, pulse, browser } = await worker(defer, false, page);
  t.diagnostic(`mic false: launch ${Math.round(browser.launchMs)} ms, PSS ${Math.round((await browser.pss()) / 2 ** 20)} MiB`);

  const devices = (await browser.page.evaluate("listDevices()")) as Device[];
  assert.deepEqual(devices.filter((d) => d.kind === "audioinput"), []);
  // Playback still has its output: the launch path is the same as with mic.
  assert.ok(devices.some((d) => d.kind === "audiooutput"));
  assert.equal(await browser.page.evaluate("tryMic()"), "NotFoundError");

  await browser.close();
  await browser.close(); // idempotent
  await pulse.stop();
  assert.deepEqual(await survivorsMentioning(dir), []);
});
