import { readFile } from "node:fs/promises";
import { listProcesses, type ProcessInfo } from "../../shared/process/group.ts";

/**
 * Every process of one Chromium instance: its process group plus anything whose command line
 * names one of its private dirs. crashpad_handler double-forks into a group of its own and names
 * only its database dir (under XDG_CONFIG_HOME), so the group alone would miss it.
 */
export async function chromiumProcesses(
  browserPid: number,
  markers: readonly string[],
): Promise<ProcessInfo[]> {
  return (await listProcesses()).filter(
    (p) => p.pgid === browserPid || markers.some((m) => p.cmdline.includes(m)),
  );
}

/**
 * The browser (main) process: the one with our user-data dir and no --type= (renderers, GPU
 * and utility processes all carry --type=). Playwright spawns it as a group leader.
 */
export async function findBrowserPid(userDataDir: string): Promise<number | undefined> {
  const marker = `--user-data-dir=${userDataDir}`;
  const main = (await listProcesses()).find(
    (p) => p.cmdline.includes(marker) && !p.cmdline.includes("--type="),
  );
  return main?.pid;
}

/**
 * Proportional set size in bytes summed over pids: unlike RSS it splits shared pages between
 * the processes that map them, so a sum over Chromium's processes is meaningful.
 */
export async function pssBytes(pids: readonly number[]): Promise<number> {
  let totalKb = 0;
  for (const pid of pids) {
    try {
      const rollup = await readFile(`/proc/${pid}/smaps_rollup`, "utf8");
      const match = /^Pss:\s+(\d+) kB/m.exec(rollup);
      if (match?.[1]) totalKb += Number(match[1]);
    } catch {
      // Exited meanwhile.
    }
  }
  return totalKb * 1024;
}
