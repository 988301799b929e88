/**
 * Per-worker memory and CPU, sampled at scrape time into two summaries (no per-session labels:
 * sessions come and go, a label each would grow without bound). A worker's processes are found
 * in /proc by the session path on their command lines (as the orphan sweep finds them): the
 * worker, its Chromium, PulseAudio and ffmpeg. Memory is PSS (shared pages split fairly); CPU is
 * the ticks used since the previous scrape over the wall time between them.
 */
import { readFile } from "node:fs/promises";
import { listProcesses } from "../../shared/process/group.ts";
import { TICKS_PER_SECOND, sumCpuTicks } from "../../shared/process/proc-stat.ts";
import { bot } from "./registry.ts";

const previous = new Map<string, { ticks: number; at: number }>();

export async function sampleWorkers(markers: string[]): Promise<void> {
  if (markers.length === 0) {
    previous.clear();
    return;
  }
  const processes = await listProcesses().catch(() => []);
  const at = performance.now();
  const seen = new Set<string>();
  for (const marker of markers) {
    const pids = processes.filter((p) => p.pid !== process.pid && p.cmdline.includes(marker)).map((p) => p.pid);
    if (pids.length === 0) continue;
    seen.add(marker);
    const [pss, ticks] = await Promise.all([sumOver(pids, pssKb), sumCpuTicks(pids)]);
    if (pss > 0) bot.workerMemory.observe(pss * 1024);
    const last = previous.get(marker);
    // Ticks of a process that exited since the last sample are gone: never report a negative.
    if (last && at > last.at && ticks >= last.ticks) bot.workerCpu.observe((ticks - last.ticks) / TICKS_PER_SECOND / ((at - last.at) / 1000));
    previous.set(marker, { ticks, at });
  }
  for (const marker of previous.keys()) if (!seen.has(marker)) previous.delete(marker);
}

async function sumOver(pids: number[], read: (pid: number) => Promise<number>): Promise<number> {
  const values = await Promise.all(pids.map((pid) => read(pid).catch(() => 0)));
  return values.reduce((a, b) => a + b, 0);
}

async function pssKb(pid: number): Promise<number> {
  const rollup = await readFile(`/proc/${pid}/smaps_rollup`, "utf8");
  return Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0);
}

