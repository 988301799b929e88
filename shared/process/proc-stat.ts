/**
 * /proc/<pid>/stat, read the one safe way: the command name in parentheses may hold spaces and
 * parentheses of its own, so fields are counted from the LAST ")". `fields[0]` is the state
 * (field 3 of proc(5)), `fields[1]` the parent, `fields[2]` the process group, `fields[11]` and
 * `fields[12]` utime and stime, `fields[16]` the nice value.
 */
import { readFile } from "node:fs/promises";

/** USER_HZ: Linux reports these times in 1/100 s on every architecture we run on. */
export const TICKS_PER_SECOND = 100;

/** The fields after the command name (proc(5) field 3 onwards). */
export function statFields(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/** CPU time (user + system, in ticks) of one process; undefined once it is gone. */
export async function cpuTicks(pid: number): Promise<number | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => undefined);
  if (stat === undefined) return undefined;
  const f = statFields(stat);
  return Number(f[11]) + Number(f[12]);
}

/** CPU ticks of several processes together (those gone count 0). */
export async function sumCpuTicks(pids: readonly number[]): Promise<number> {
  const each = await Promise.all(pids.map((pid) => cpuTicks(pid)));
  return each.reduce<number>((sum, t) => sum + (t ?? 0), 0);
}
