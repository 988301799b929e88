import { readFile, readdir } from "node:fs/promises";
import { setPriority } from "node:os";
import type { Logger } from "../../shared/log/logger.ts";
import { statFields } from "../../shared/process/proc-stat.ts";

/**
 * Nice value for every thread of Chromium's audio service. Its PulseAudio thread pulls each
 * buffer from the renderer and writes it to the worker's daemon; Chromium leaves it at nice 0,
 * below its own compositor and network threads (-8), so with 8 meetings on 2 cores it was the
 * link that starved. The renderer's audio threads are already SCHED_RR (Chromium's own doing)
 * and the daemon runs realtime (pulse.ts); -11 is PulseAudio's own default for its main thread.
 */
export const AUDIO_SERVICE_NICE = -11;
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
 * thread that starts them, but one may appear between two polls). Best effort: without the
 * privilege to raise priority it logs once and stops.
 */
export function keepAudioServicePriority(browserPid: number, logger: Logger): AudioPriority {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let boosted = 0;
  const poll = async (): Promise<void> => {
    try {
      for (const pid of await audioServicePids(browserPid)) {
        for (const tid of await threadIds(pid)) {
          if ((await niceOf(pid, tid)) === AUDIO_SERVICE_NICE) continue;
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
    if (!stopped) timer = setTimeout(() => void poll(), POLL_MS).unref();
  };
  void poll();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/** Children of the browser process that run the audio service (normally one). */
async function audioServicePids(browserPid: number): Promise<number[]> {
  const children: number[] = [];
  for (const tid of await threadIds(browserPid)) {
    const list = await readFile(`/proc/${browserPid}/task/${tid}/children`, "utf8").catch(() => "");
    for (const pid of list.split(" ")) if (pid.trim() !== "") children.push(Number(pid));
  }
  const found: number[] = [];
  for (const pid of children) {
    const cmdline = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
    if (cmdline.includes(AUDIO_SERVICE)) found.push(pid);
  }
  return found;
}

async function threadIds(pid: number): Promise<number[]> {
  return (await readdir(`/proc/${pid}/task`).catch(() => [] as string[])).map(Number);
}

/** Field 19 of /proc/PID/task/TID/stat; undefined when the thread is gone. */
async function niceOf(pid: number, tid: number): Promise<number | undefined> {
  const stat = await readFile(`/proc/${pid}/task/${tid}/stat`, "utf8").catch(() => undefined);
  if (stat === undefined) return undefined;
  return Number(statFields(stat)[16]);
}
