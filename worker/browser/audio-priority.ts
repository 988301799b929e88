import { readFileSync, readdirSync } from "node:fs";
import { setPriority } from "node:os";
import type { Logger } from "../../shared/log/logger.ts";
import { statFields } from "../../shared/process/proc-stat.ts";
import { isRoundRobin, setRoundRobin } from "./realtime-thread.ts";

/**
 * Nice value for every thread of Chromium's audio service. Its PulseAudio thread pulls each
 * buffer from the renderer and writes it to the worker's daemon; Chromium leaves it at nice 0,
 * below its own compositor and network threads (-8), so with 8 meetings on 2 cores it was the
 * link that starved. The renderer's audio threads are already SCHED_RR (Chromium's own doing)
 * and the daemon runs realtime (pulse.ts); -11 is PulseAudio's own default for its main thread.
 */
export const AUDIO_SERVICE_NICE = -11;
/**
 * The service's PulseAudio threads (libpulse's threaded mainloop, named "threaded-ml") pull each
 * buffer from the renderer and write it to the daemon: they run SCHED_RR at the priority Chromium
 * gives its own real-time audio threads in the renderer (8; the daemon's sink thread is at 5).
 * A/B, 8 bots in the realistic meeting with video, 2 min, the 500 ms buffer (`make bench-bot`,
 * BENCH_AUDIO_SERVICE_RR=0 for the B side): see the commit that brought it.
 */
export const PULSE_THREAD_RR_PRIORITY = 8;
const PULSE_THREAD = "threaded-ml";
/** The service starts with the page's first sound (and again after a crash): look for it this often. */
const POLL_MS = 1_000;
const AUDIO_SERVICE = "--utility-sub-type=audio.mojom.AudioService";

export interface AudioPriority {
  /** Stops watching; idempotent. */
  stop(): void;
}

/**
 * Keeps the audio service of the browser `browserPid` at AUDIO_SERVICE_NICE: each poll renices
 * any of its threads that is not there yet (threads it starts later inherit the value from the
 * thread that starts them, but one may appear between two polls), and puts its pulse threads
 * under SCHED_RR (PULSE_THREAD_RR_PRIORITY). Best effort: without the privilege to raise priority
 * it logs once and stops (without the one for real-time, it logs once and keeps the nice value).
 *
 * Cheap once the service is found: a poll reads the service's cmdline (still the service?) and
 * the nice value of each of its threads (Chromium may set a thread's own priority after the
 * renice, so every poll checks them all); the browser's children are searched only until the
 * service is found, and again when it goes away (a crashed service comes back as a new process).
 * The reads are synchronous: /proc answers from memory, while a promise-based readFile per
 * browser thread, child and service thread every second (the first version) cost each bot about
 * 0.3 % of a core in its worker (V8 CPU profile of a recording worker, 40 s: 210 ms in readFile).
 */
export function keepAudioServicePriority(
  browserPid: number,
  logger: Logger,
  options: { realtime?: boolean; /** A service found earlier is gone (it crashed or was killed). */ onServiceGone?: () => void } = {},
): AudioPriority {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let boosted = 0;
  let services: number[] = [];
  let realtime = options.realtime ?? audioServiceRealtimeEnabled();
  const pending = new Set<number>();
  const makeRealtime = (pid: number, tid: number): void => {
    if (!realtime || pending.has(tid) || readProc(`/proc/${pid}/task/${tid}/comm`).trim() !== PULSE_THREAD || isRoundRobin(pid, tid)) return;
    pending.add(tid);
    setRoundRobin(tid, PULSE_THREAD_RR_PRIORITY)
      .then(() => logger.debug({ audio_service_pid: pid, tid, priority: PULSE_THREAD_RR_PRIORITY }, "audio service pulse thread real-time"))
      .catch((err: unknown) => {
        // Not allowed: nice alone from now on. Anything else (the thread gone, chrt slow on a
        // saturated box): the next poll sees the new state and tries again.
        if (realtime && isNotPermitted(err)) {
          realtime = false;
          logger.warn({ err }, "cannot make the audio service's pulse threads real-time; recordings may have gaps under load");
        }
      })
      .finally(() => pending.delete(tid));
  };
  const poll = (): void => {
    try {
      const alive = services.filter(isAudioService);
      if (alive.length < services.length) options.onServiceGone?.();
      services = alive.length > 0 ? alive : audioServicePids(browserPid);
      for (const pid of services) {
        for (const tid of threadIds(pid)) {
          makeRealtime(pid, tid);
          if (niceOf(pid, tid) === AUDIO_SERVICE_NICE) continue;
          setPriority(tid, AUDIO_SERVICE_NICE);
          if (boosted++ === 0) logger.debug({ audio_service_pid: pid, nice: AUDIO_SERVICE_NICE }, "audio service priority raised");
        }
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EACCES" || (err as NodeJS.ErrnoException).code === "EPERM") {
        logger.warn({ err }, "cannot raise the audio service's priority; recordings may have gaps under load");
        stopped = true;
      }
      // Otherwise a process or thread went away meanwhile: the next poll sees the new state.
    }
    if (!stopped) timer = setTimeout(poll, POLL_MS).unref();
  };
  poll();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/**
 * Whether the service's pulse threads go real-time: yes unless TOAMAISUTAA_AUDIO_SERVICE_RR=0,
 * which exists only so that `make bench-bot` can A/B it (BENCH_AUDIO_SERVICE_RR=0).
 */
export function audioServiceRealtimeEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.TOAMAISUTAA_AUDIO_SERVICE_RR !== "0";
}

/** chrt reports sched_setscheduler's EPERM as "Operation not permitted" on its stderr. */
const isNotPermitted = (err: unknown): boolean => /not permitted/i.test(String((err as { stderr?: unknown }).stderr ?? err));

const readProc = (path: string): string => {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
};

const isAudioService = (pid: number): boolean => readProc(`/proc/${pid}/cmdline`).includes(AUDIO_SERVICE);

/** Children of the browser process that run the audio service (normally one). */
function audioServicePids(browserPid: number): number[] {
  const children: number[] = [];
  for (const tid of threadIds(browserPid)) {
    for (const pid of readProc(`/proc/${browserPid}/task/${tid}/children`).split(" ")) if (pid.trim() !== "") children.push(Number(pid));
  }
  return children.filter(isAudioService);
}

function threadIds(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).map(Number);
  } catch {
    return [];
  }
}

/** Field 19 of /proc/PID/task/TID/stat; undefined when the thread is gone. */
function niceOf(pid: number, tid: number): number | undefined {
  const stat = readProc(`/proc/${pid}/task/${tid}/stat`);
  return stat === "" ? undefined : Number(statFields(stat)[16]);
}
