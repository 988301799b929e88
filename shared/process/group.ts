import { readFile, readdir } from "node:fs/promises";
import { statFields } from "./proc-stat.ts";

/**
 * Sends a signal to a whole process group (negative pid). Returns false when the group is gone
 * (ESRCH), which callers treat as success: there is nothing left to stop.
 */
export function signalProcessGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ESRCH") return false;
    throw err;
  }
}

/** SIGKILL to the whole group; safe to call when it no longer exists. */
export function killProcessGroup(pgid: number): boolean {
  return signalProcessGroup(pgid, "SIGKILL");
}

/** Whether a process with this pid exists (and is not a zombie). */
export async function isAlive(pid: number): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8");
    return statFields(stat)[0] !== "Z";
  } catch {
    return false;
  }
}

/** Resolves true once the pid is gone, false when still alive after timeoutMs. */
export async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (await isAlive(pid)) {
    if (performance.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return true;
}

export interface ProcessInfo {
  pid: number;
  ppid: number;
  pgid: number;
  cmdline: string;
}

/** Every live process from /proc (zombies excluded), for finding groups and leftovers. */
export async function listProcesses(): Promise<ProcessInfo[]> {
  const entries = await readdir("/proc");
  const out: ProcessInfo[] = [];
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const [stat, cmd] = await Promise.all([
        readFile(`/proc/${name}/stat`, "utf8"),
        readFile(`/proc/${name}/cmdline`, "utf8"),
      ]);
      const rest = statFields(stat);
      if (rest[0] === "Z") continue;
      out.push({
        pid: Number(name),
        ppid: Number(rest[1]),
        pgid: Number(rest[2]),
        cmdline: cmd.split("\0").join(" ").trim(),
      });
    } catch {
      // The process exited between readdir and readFile.
    }
  }
  return out;
}

/** Pids of the processes in a group. */
export async function groupMembers(pgid: number): Promise<number[]> {
  return (await listProcesses()).filter((p) => p.pgid === pgid).map((p) => p.pid);
}

/** `roots` and every descendant of theirs among `all` (a listProcesses() snapshot). */
export function processTree(all: readonly ProcessInfo[], roots: readonly number[]): Set<number> {
  const tree = new Set(roots);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of all) {
      if (tree.has(p.pid) || !tree.has(p.ppid)) continue;
      tree.add(p.pid);
      grew = true;
    }
  }
  return tree;
}
