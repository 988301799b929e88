/**
 * Real-time scheduling of one thread of another process. Node has no sched_setscheduler(2), so
 * this runs util-linux's `chrt` (Essential in Debian, in every image we build); it is needed once
 * per thread, not per poll: the policy is read back from /proc first.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { statFields } from "../../shared/process/proc-stat.ts";

const execFileAsync = promisify(execFile);

/** sched(7): SCHED_RR's number in field 41 of /proc/PID/task/TID/stat. */
const SCHED_RR = 2;

/** Field 41 (policy) of the thread's stat; undefined when the thread is gone. */
export function schedulingPolicy(pid: number, tid: number): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  return Number(statFields(stat)[38]);
}

export const isRoundRobin = (pid: number, tid: number): boolean => schedulingPolicy(pid, tid) === SCHED_RR;

/**
 * Puts thread `tid` under SCHED_RR at `priority` (1-99). Rejects with chrt's own message, in
 * English whatever the locale (the caller tells EPERM by it), when it may not (no CAP_SYS_NICE
 * and no RLIMIT_RTPRIO) or the thread is gone.
 */
export async function setRoundRobin(tid: number, priority: number): Promise<void> {
  await execFileAsync("chrt", ["--rr", "--pid", String(priority), String(tid)], { timeout: 5_000, env: { ...process.env, LC_ALL: "C" } });
}
