import { execFile } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Logger } from "../../shared/log/logger.ts";
import { spawnChild, type Child, type ChildExit } from "../../shared/process/child.ts";
import { GapDetector } from "./gaps.ts";

const execFileAsync = promisify(execFile);

/** The recording sink: what a participant hears, at the spec's 48 kHz / 16-bit / stereo. */
export const REC_SINK = "rec";
export const REC_MONITOR = "rec.monitor";
/** Virtual microphone: playback is written into this mono sink... */
export const MIC_SINK = "mic";
/** ...and Chromium captures it through this remap, because it hides monitor sources. */
export const MIC_SOURCE = "micsrc";

export interface PulseOptions {
  /** The worker's own directory; every PulseAudio file lives under it. */
  dir: string;
  logger: Logger;
  /** Create the virtual microphone (MIC_PLAYBACK_ENABLED); otherwise the daemon has no source. */
  mic: boolean;
  /** How long to wait for the daemon to answer pactl. */
  startTimeoutMs?: number;
}

export interface PulseDaemon {
  /** Environment for every client of this daemon (Chromium, ffmpeg, pactl, pacat). */
  readonly env: Record<string, string>;
  readonly pid: number;
  readonly recMonitor: typeof REC_MONITOR;
  readonly micSink?: typeof MIC_SINK;
  /** Resolves when the daemon exits, whether stopped or crashed. */
  readonly exited: Promise<ChildExit>;
  /** Underruns of the streams playing into `rec`, read from the daemon's log (gaps.ts). */
  readonly gaps: GapDetector;
  pactl(args: string[]): Promise<string>;
  stop(): Promise<void>;
}

const DAEMON_CONF = [
  "default-sample-rate = 48000",
  "alternate-sample-rate = 48000",
  "default-sample-channels = 2",
  "default-sample-format = s16le",
  // Its main thread (nice -11) answers the clients and tells Chromium when to write; its sink
  // thread (SCHED_RR) mixes. At nice 0, 8 meetings on 2 cores starved them and Chromium's
  // stream underran into 300 ms gaps (bench/bot.ts). Root here may raise priority (measured);
  // without the privilege the daemon logs a warning and runs as before.
  "high-priority = yes",
  "realtime-scheduling = yes",
  // Listening taps ask for their own rate (worker/listen/capture.ts): speex at quality 3 left a
  // 6 kHz tone resampled to 8 kHz at -108 dB under a 1 kHz one (the default, speex-float-1:
  // -73 dB), for no CPU the daemon's tick count could tell apart (three taps, 20 s). Nothing
  // else here is resampled: Chromium, the recorder and the microphone run at 48 kHz.
  "resample-method = speex-float-3",
  "",
].join("\n");

/** `(   0.123|   0.000) D: [pulseaudio] ...`: a line at debug or info level. */
const DEBUG_OR_INFO = /^\([^)]*\)\s+[DI]: /;

const DEFAULT_START_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 3_000;

/**
 * Starts a private PulseAudio daemon for one worker (see media-pipeline.md): a daemon per worker
 * keeps meetings from seeing each other's devices and confines a crash to one meeting.
 *
 * The daemon runs in the foreground (--daemonize=no) as our own child in its own process group,
 * so its pid, exit and log lines are ours without reading a pid file or losing it to init.
 */
export async function startPulse(options: PulseOptions): Promise<PulseDaemon> {
  const { dir, logger, mic } = options;
  const home = join(dir, "home");
  const runtime = join(dir, "run");
  const state = join(dir, "state");
  await Promise.all([home, runtime, state].map((d) => mkdir(d, { recursive: true, mode: 0o700 })));
  const socket = join(runtime, "native");
  // The daemon default is 44100 Hz and there is no command-line switch for it; 48 kHz matches
  // the recording format and Chromium's WebRTC audio, so nothing is resampled on the way.
  const confDir = join(home, ".config", "pulse");
  await mkdir(confDir, { recursive: true, mode: 0o700 });
  await writeFile(join(confDir, "daemon.conf"), DAEMON_CONF);

  const daemonEnv: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    PULSE_RUNTIME_PATH: runtime,
    PULSE_STATE_PATH: state,
    // Keeps the daemon from reading the user's ~/.config/pulse/*.pa of the host.
    XDG_CONFIG_HOME: join(home, ".config"),
  };
  const args = [
    "-n", // no default.pa: only the modules below, nothing probing real hardware
    "--daemonize=no",
    "--use-pid-file=yes",
    "--exit-idle-time=-1",
    "--disallow-exit=yes",
    "--disallow-module-loading=no",
    "--log-target=stderr",
    // Debug: the only place the daemon tells of a stream's underrun (gaps.ts, with the cost
    // measured there); the time stamps measure each gap. Steady playback logs nothing.
    "--log-level=debug",
    "--log-time=1",
    "-L",
    `module-native-protocol-unix socket=${socket} auth-anonymous=1`,
    "-L",
    `module-null-sink sink_name=${REC_SINK} rate=48000 channels=2 format=s16le sink_properties=device.description=rec`,
  ];
  if (mic) {
    args.push(
      "-L",
      `module-null-sink sink_name=${MIC_SINK} rate=48000 channels=1 format=s16le sink_properties=device.description=mic`,
      "-L",
      `module-remap-source master=${MIC_SINK}.monitor source_name=${MIC_SOURCE} source_properties=device.description=micsrc`,
    );
  }

  const gaps = new GapDetector(REC_SINK);
  const child = spawnChild({
    command: "pulseaudio",
    args,
    env: daemonEnv,
    logger,
    name: "pulseaudio",
    onStderrLine: (line) => gaps.feed(line),
    // A failed start is explained by its warnings and errors, not by the debug lines after them.
    keepInTail: (line) => !DEBUG_OR_INFO.test(line),
  });
  const log = logger.child({ pulse_pid: child.pid });

  const clientEnv: Record<string, string> = {
    PULSE_SERVER: `unix:${socket}`,
    PULSE_SINK: REC_SINK,
    HOME: home,
    // libpulse otherwise looks for (and may create) a cookie in the host user's home.
    PULSE_COOKIE: join(home, "pulse-cookie"),
    PULSE_RUNTIME_PATH: runtime,
  };
  if (mic) clientEnv.PULSE_SOURCE = MIC_SOURCE;

  const pactl = async (pactlArgs: string[]): Promise<string> => {
    try {
      const { stdout } = await execFileAsync("pactl", pactlArgs, {
        env: { PATH: daemonEnv.PATH, ...clientEnv },
        timeout: 5_000,
      });
      return stdout;
    } catch (err) {
      throw new Error(`pactl ${pactlArgs.join(" ")} failed`, { cause: err });
    }
  };

  const stop = async (): Promise<void> => {
    await child.stop({ signal: "SIGTERM", timeoutMs: STOP_TIMEOUT_MS });
  };

  try {
    await waitUntilReady(child, pactl, options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS);
    await pactl(["set-default-sink", REC_SINK]);
    if (mic) await pactl(["set-default-source", MIC_SOURCE]);
    await verifyDevices(pactl, mic);
    await checkPidFile(runtime, child.pid, log);
  } catch (err) {
    await stop();
    throw new Error(`PulseAudio did not start in ${dir}: ${child.stderrTail().join(" | ")}`, {
      cause: err,
    });
  }
  log.debug({ mic }, "pulseaudio ready");

  return {
    env: clientEnv,
    pid: child.pid,
    recMonitor: REC_MONITOR,
    ...(mic ? { micSink: MIC_SINK } : {}),
    exited: child.exited,
    gaps,
    pactl,
    stop,
  };
}

async function waitUntilReady(
  child: Child,
  pactl: (args: string[]) => Promise<string>,
  timeoutMs: number,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let lastError: unknown;
  while (performance.now() < deadline) {
    if (child.hasExited) throw new Error("pulseaudio exited during start-up");
    try {
      await pactl(["info"]);
      return;
    } catch (err) {
      lastError = err;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`pulseaudio not reachable after ${timeoutMs} ms`, { cause: lastError });
}

/**
 * A missing sink makes Chromium's audio vanish silently (media-pipeline.md), and a stray source
 * would hand a no-mic browser a capture device: check both ways before anyone connects.
 */
async function verifyDevices(pactl: (args: string[]) => Promise<string>, mic: boolean): Promise<void> {
  const sinks = names(await pactl(["list", "short", "sinks"]));
  const sources = names(await pactl(["list", "short", "sources"]));
  const wantSinks = mic ? [REC_SINK, MIC_SINK] : [REC_SINK];
  const wantSources = mic ? [REC_MONITOR, `${MIC_SINK}.monitor`, MIC_SOURCE] : [REC_MONITOR];
  if (!sameSet(sinks, wantSinks) || !sameSet(sources, wantSources)) {
    throw new Error(
      `unexpected devices: sinks [${sinks.join(", ")}], sources [${sources.join(", ")}]`,
    );
  }
  const info = await pactl(["info"]);
  if (!info.includes(`Default Sink: ${REC_SINK}`)) throw new Error("rec is not the default sink");
  if (mic && !info.includes(`Default Source: ${MIC_SOURCE}`)) {
    throw new Error("micsrc is not the default source");
  }
}

function names(shortList: string): string[] {
  return shortList
    .split("\n")
    .map((line) => line.split("\t")[1])
    .filter((n): n is string => n !== undefined && n !== "");
}

function sameSet(actual: string[], expected: string[]): boolean {
  return actual.length === expected.length && expected.every((e) => actual.includes(e));
}

/** The pid file must name our child; anything else means a second daemon shares this dir. */
async function checkPidFile(runtime: string, pid: number, log: Logger): Promise<void> {
  try {
    const filePid = Number((await readFile(join(runtime, "pid"), "utf8")).trim());
    if (filePid !== pid) throw new Error(`pid file names ${filePid}, expected ${pid}`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") {
      log.debug("no pulseaudio pid file");
      return;
    }
    throw err;
  }
}
