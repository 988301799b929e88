import { mkdir, rm } from "node:fs/promises";
import { flushCompileCache } from "node:module";
import { join } from "node:path";
import type { BrowserContext, BrowserType, Page } from "playwright-core";
import type { Logger } from "../../shared/log/logger.ts";
import { killProcessGroup } from "../../shared/process/group.ts";
import { keepAudioServicePriority } from "./audio-priority.ts";
import { withFeatures } from "./features.ts";
import { fieldTrialArgs } from "./field-trials.ts";
import { chromiumProcesses, findBrowserPid, pssBytes } from "./processes.ts";
import { installStillPage } from "./still-page.ts";
import { installVideoGuard, videoGuardEnabled } from "./video-guard.ts";
import { benchOverride } from "../../shared/process/bench-override.ts";
import { within } from "../../shared/timeout.ts";

/** The default of CHROMIUM_PATH; the worker's `init.chromiumPath` overrides it. */
export const CHROMIUM_PATH = "/usr/bin/chromium";

let playwright: Promise<{ chromium: BrowserType }> | undefined;
/**
 * Loads Playwright (memoised). Importing it costs the worker 1.5-4 s of CPU on a loaded 2-core
 * box, so the worker starts the load early and does it while PulseAudio starts, instead of
 * before it can even read its `init`.
 */
export function loadPlaywright(): Promise<{ chromium: BrowserType }> {
  playwright ??= import("playwright-core").then((module) => {
    // With a compile cache (NODE_COMPILE_CACHE, worker-process.ts), Node writes it at exit: now,
    // so that the next worker to start finds Playwright compiled (a no-op without a cache).
    flushCompileCache();
    return module;
  });
  return playwright;
}

/** The one language the bot's browser speaks (#16), whatever LANG, LANGUAGE and LC_* the host has. */
export const BROWSER_LOCALE = "en-US";
export const ACCEPT_LANGUAGES = "en-US,en";
const ACCEPT_LANGUAGE_HEADER = "en-US,en;q=0.9";

/** Flags measured to work headless in a container (media-pipeline.md). */
export const CHROMIUM_ARGS: readonly string[] = [
  "--no-sandbox", // root in a container: the sandbox cannot start
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  // The meeting's audio must play without a click on the page.
  "--autoplay-policy=no-user-gesture-required",
  // Accepts media prompts without UI. With mic false there is no capture device in the worker's
  // daemon and no microphone permission, so nothing can be captured; the flag stays so that the
  // launch is the same either way.
  "--use-fake-ui-for-media-stream",
  // #16: Teams renders the page in the browser's language; the adapter reads English. `--lang`
  // alone loses to LANGUAGE in the environment (measured: navigator.language de-DE with
  // LANGUAGE=de); `--accept-lang` and the context locale below pin it whatever the host says.
  `--lang=${BROWSER_LOCALE}`,
  `--accept-lang=${ACCEPT_LANGUAGES}`,
  // Chromium 156 starts its on-device AI service 3 minutes after launch to benchmark the machine
  // for Gemini Nano (optimization_guide's PerformanceClassifier, whatever the two features that
  // gate it say): one more process of 56 MB PSS per bot for the rest of the meeting, and a burst of
  // CPU (up to 1.6 s in a meeting). A performance class given on the command line (9: "native
  // library failed to load") is taken as is, and the service never starts: measured with the
  // browser alone, 200 s, no on_device_model process against one at +180 s (56.1 MB PSS).
  "--optimization-guide-performance-class=9",
  // With the GPU disabled its process only composites in software: as a thread of the browser
  // process it saves a process per bot (`bench/bot/flags-ab.ts`, A and B at once, 2 rounds × 20 s,
  // video on: PSS 265 -> 258 MB, CPU 7.5 -> 7.2 % of a core, 10 -> 9 processes).
  "--in-process-gpu",
];

export interface LaunchOptions {
  /** The worker's directory; the profile goes in a fresh subdirectory, removed on close. */
  dir: string;
  /** PulseDaemon.env: routes the browser's audio to the worker's own daemon. */
  pulseEnv: Record<string, string>;
  logger: Logger;
  mic: boolean;
  /** The Chromium binary (CHROMIUM_PATH); /usr/bin/chromium when absent. */
  executablePath?: string;
  extraArgs?: readonly string[];
  /** More of the browser's environment, on top of what launchBrowser sets (benches' A/B). */
  extraEnv?: Readonly<Record<string, string>>;
  launchTimeoutMs?: number;
  /** Pulse buffer for the browser's streams (PULSE_LATENCY_MSEC); default 500 without mic, unset with mic. */
  pulseLatencyMs?: number;
  /** How long close() lets Chromium shut down cleanly before killing it. */
  closeTimeoutMs?: number;
  /** Device pixels per CSS pixel of the page (Playwright's default 1 when absent). */
  deviceScaleFactor?: number;
  /** Stop the page's CSS animations (still-page.ts); default true. */
  stillPage?: boolean;
  /** Keep incoming video from being received (video-guard.ts); default videoGuardEnabled(). */
  videoGuard?: boolean;
}

export interface BrowserHandle {
  readonly context: BrowserContext;
  readonly page: Page;
  /** The browser (main) process; it leads the process group of all Chromium processes. */
  readonly pid: number;
  readonly userDataDir: string;
  /** Milliseconds from launch call to the first page being available. */
  readonly launchMs: number;
  /**
   * Resolves when the browser goes away, whether by close() or by a crash; `expected` is false
   * for a crash, which the worker reports as a browser failure.
   */
  readonly closed: Promise<{ expected: boolean }>;
  /**
   * Calls `listener` when Chromium's audio service dies while the browser runs (the meeting's
   * audio stops reaching PulseAudio for good); returns the unsubscribe.
   */
  onAudioServiceGone(listener: () => void): () => void;
  /**
   * PSS summed over every process of this browser, in bytes. Not while recording: reading
   * smaps_rollup holds each process's mmap lock and stalled Chromium's audio for 100-300 ms.
   */
  pss(): Promise<number>;
  /** Closes the context (bounded), then kills whatever is left of the group; idempotent. */
  close(): Promise<void>;
}

const DEFAULT_LAUNCH_TIMEOUT_MS = 60_000;
const CLOSE_TIMEOUT_MS = 5_000;
const NO_MIC_PULSE_LATENCY_MS = 500;

/**
 * The buffer without a mic: NO_MIC_PULSE_LATENCY_MS unless TOAMAISUTAA_PULSE_LATENCY_MSEC says
 * otherwise, which exists only so that `make bench-bot` can A/B it (BENCH_PULSE_LATENCY_MS).
 */
export function noMicPulseLatencyMs(env: NodeJS.ProcessEnv = process.env): number {
  return benchOverride("TOAMAISUTAA_PULSE_LATENCY_MSEC", NO_MIC_PULSE_LATENCY_MS, env);
}

export async function launchBrowser(options: LaunchOptions): Promise<BrowserHandle> {
  const { dir, logger, mic } = options;
  const userDataDir = join(dir, `chromium-profile-${Date.now()}`);
  const configHome = join(dir, "chromium-config");
  await mkdir(userDataDir, { recursive: true });
  await mkdir(configHome, { recursive: true });

  const latencyMs = options.pulseLatencyMs ?? (mic ? undefined : noMicPulseLatencyMs());
  // A minimal environment: the host's PULSE_* or DISPLAY must not leak into a worker's browser.
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    // Never the host's LANG/LANGUAGE/LC_*: they would pick Chromium's UI language (#16).
    LANG: "en_US.UTF-8",
    LANGUAGE: "en_US:en",
    TZ: process.env.TZ ?? "UTC",
    ...options.pulseEnv,
    // libpulse's buffer override. Chromium's ~20 ms default underran into 100-300 ms gaps in
    // recordings when the 2-core box was overloaded; 200 ms removed most of them, but 8 bots on
    // 2 cores still showed ~29 gaps > 100 ms per bot-minute; 500 ms: 0.1 (bench/bot.ts). 250 ms,
    // for live listening's sake (this buffer is 260-280 ms of its latency without a mic): 37 gaps
    // in 8 bot-runs of ~100 s, 2.8 per bot-minute, against 4 (0.4) at 500 ms right after
    // (BENCH_PULSE_LATENCY_MS, 8 bots, load 3-70). It also sets
    // the capture fragment size, which delivered the microphone in bursts (page RMS 0.038
    // instead of 0.044), so with a mic it stays off unless asked for.
    ...(latencyMs ? { PULSE_LATENCY_MSEC: String(latencyMs) } : {}),
    // Chromium writes crash reports and settings here; per worker, so meetings share nothing.
    XDG_CONFIG_HOME: configHome,
    XDG_CACHE_HOME: join(configHome, "cache"),
    ...options.extraEnv,
  };
  const { chromium } = await loadPlaywright();
  const features = withFeatures([...CHROMIUM_ARGS, ...fieldTrialArgs(mic), ...(options.extraArgs ?? [])]);
  const started = performance.now();
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: options.executablePath ?? CHROMIUM_PATH,
      headless: true,
      // Playwright mutes headless audio by default, which makes every recording pure zeros.
      ignoreDefaultArgs: ["--mute-audio", ...features.ignoreDefaultArgs],
      args: features.args,
      env,
      permissions: mic ? ["microphone"] : [],
      locale: BROWSER_LOCALE,
      ...(options.deviceScaleFactor === undefined ? {} : { deviceScaleFactor: options.deviceScaleFactor }),
      extraHTTPHeaders: { "Accept-Language": ACCEPT_LANGUAGE_HEADER },
      timeout: options.launchTimeoutMs ?? DEFAULT_LAUNCH_TIMEOUT_MS,
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
    });
  } catch (err) {
    await rm(userDataDir, { recursive: true, force: true });
    throw new Error("Chromium did not launch", { cause: err });
  }
  if (options.videoGuard ?? videoGuardEnabled()) {
    await installVideoGuard(context).catch(async (err: unknown) => {
      await context.close().catch(() => undefined);
      await rm(userDataDir, { recursive: true, force: true });
      throw new Error("Chromium did not take the video guard", { cause: err });
    });
  }
  if (options.stillPage ?? true) {
    await installStillPage(context).catch(async (err: unknown) => {
      await context.close().catch(() => undefined);
      await rm(userDataDir, { recursive: true, force: true });
      throw new Error("Chromium did not take the still-page sheet", { cause: err });
    });
  }
  const page = context.pages()[0] ?? (await context.newPage());
  const launchMs = performance.now() - started;

  const pid = await findBrowserPid(userDataDir);
  if (pid === undefined) {
    await context.close().catch(() => undefined);
    await rm(userDataDir, { recursive: true, force: true });
    throw new Error(`launched Chromium has no browser process for ${userDataDir}`);
  }
  const markers = [userDataDir, configHome];
  const log = logger.child({ browser_pid: pid });
  log.debug({ launchMs: Math.round(launchMs), mic }, "chromium launched");

  // Chromium restarts a dead audio service, but the page's WebRTC playout does not come back with
  // it (measured: re-attaching the media elements gives a new stream of silence): the session is told.
  const audioServiceGone = new Set<() => void>();
  const audioPriority = keepAudioServicePriority(pid, log, {
    onServiceGone: () => {
      log.warn("chromium's audio service went away");
      for (const listener of audioServiceGone) listener();
    },
  });

  let closeRequested = false;
  const closed = new Promise<{ expected: boolean }>((resolve) => {
    context.once("close", () => {
      audioPriority.stop();
      if (!closeRequested) log.error("chromium went away unexpectedly");
      resolve({ expected: closeRequested });
    });
  });

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      closeRequested = true;
      audioPriority.stop();
      const closed = context.close().then(
        () => true,
        (err: unknown) => {
          log.warn({ err }, "context close failed");
          return false;
        },
      );
      const inTime = (await within(closed, options.closeTimeoutMs ?? CLOSE_TIMEOUT_MS)) === true;
      if (!inTime) log.warn("chromium did not close in time; killing its processes");
      await killAll(pid, markers);
      await rm(userDataDir, { recursive: true, force: true, maxRetries: 3 });
    })();
    return closing;
  };

  return {
    context,
    page,
    pid,
    userDataDir,
    launchMs,
    closed,
    onAudioServiceGone(listener) {
      audioServiceGone.add(listener);
      return () => void audioServiceGone.delete(listener);
    },
    pss: async () => pssBytes((await chromiumProcesses(pid, markers)).map((p) => p.pid)),
    close,
  };
}

/** SIGKILL the group and any straggler naming one of its dirs, until none is left. */
async function killAll(pid: number, markers: readonly string[]): Promise<void> {
  for (let attempt = 0; attempt < 40; attempt++) {
    const left = await chromiumProcesses(pid, markers);
    if (left.length === 0) return;
    killProcessGroup(pid);
    // A straggler outside the group is killed alone: its group may not be Chromium's.
    for (const p of left) if (p.pgid !== pid) tryKill(p.pid);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`Chromium processes of ${markers.join(", ")} survived SIGKILL`);
}

function tryKill(pid: number): boolean {
  try {
    process.kill(pid, "SIGKILL");
    return true;
  } catch {
    return false;
  }
}
