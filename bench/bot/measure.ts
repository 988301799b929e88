/** What `make bench-bot` measures of a worker's process tree, and how it summarises figures. */
import { cpus, totalmem } from "node:os";
import { execFileSync } from "node:child_process";
import { listProcesses, type ProcessInfo } from "../../shared/process/group.ts";
import { TICKS_PER_SECOND, cpuTicks } from "../../shared/process/proc-stat.ts";
import { pssBytes } from "../../worker/browser/processes.ts";

/**
 * One worker's tree among `all`: every process naming its folder (worker, Chromium, ffmpeg,
 * PulseAudio: warm workers live in their session's folder too), plus the groups they lead.
 */
function inTree<T extends ProcessInfo>(all: T[], marker: string): T[] {
  const groups = new Set(all.filter((p) => p.cmdline.includes(marker)).map((p) => p.pgid));
  return all.filter((p) => groups.has(p.pgid) || p.cmdline.includes(marker));
}

/** Pids of one worker's tree (inTree). */
export async function treePids(marker: string): Promise<number[]> {
  return inTree(await listProcesses(), marker).map((p) => p.pid);
}

/**
 * CPU of a tree over `seconds`, in % of one core: ticks of the processes alive at both ends,
 * plus those of processes that appeared meanwhile (from 0).
 */
export async function cpuPercent(marker: string, seconds: number): Promise<number> {
  return (await cpuByKind(marker, seconds)).get("all") ?? 0;
}

/** The kind of a process of a worker's tree, for splitting its CPU: Chromium's by `--type=`. */
export function processKind(cmdline: string): string {
  const type = /--type=(\S+)/.exec(cmdline)?.[1];
  if (type === "utility") return `utility:${/--utility-sub-type=(?:\S*\.)?(\w+)\.mojom/.exec(cmdline)?.[1] ?? /--utility-sub-type=(\S+)/.exec(cmdline)?.[1] ?? "?"}`;
  if (type) return type;
  if (/chrom/i.test(cmdline.split(" ")[0] ?? "")) return "browser";
  if (/ffmpeg/.test(cmdline)) return "ffmpeg";
  if (/pulseaudio/.test(cmdline)) return "pulseaudio";
  if (/node/.test(cmdline.split(" ")[0] ?? "")) return "worker";
  return "other";
}

/** CPU ticks of each process of a tree, with its kind, at one moment. */
export type TreeTicks = Map<number, { kind: string; ticks: number }>;

/** One look at several trees at once (one /proc walk): a TreeTicks per marker. */
export async function treeTicks(markers: string[]): Promise<Map<string, TreeTicks>> {
  const all = await listProcesses();
  const out = new Map<string, TreeTicks>();
  for (const marker of markers) {
    const tree: TreeTicks = new Map();
    for (const p of inTree(all, marker)) {
      const ticks = await cpuTicks(p.pid);
      if (ticks !== undefined) tree.set(p.pid, { kind: processKind(p.cmdline), ticks });
    }
    out.set(marker, tree);
  }
  return out;
}

/**
 * % of one core per kind between two looks at a tree `seconds` apart, the total under "all":
 * processes alive at both ends, plus those that appeared meanwhile (from 0).
 */
export function cpuBetween(before: TreeTicks, after: TreeTicks, seconds: number): Map<string, number> {
  const out = new Map<string, number>([["all", 0]]);
  for (const [pid, { kind, ticks }] of after) {
    const share = ((ticks - (before.get(pid)?.ticks ?? 0)) / TICKS_PER_SECOND / seconds) * 100;
    out.set(kind, (out.get(kind) ?? 0) + share);
    out.set("all", (out.get("all") ?? 0) + share);
  }
  return out;
}

/** Like cpuPercent, split by processKind: % of one core per kind, and the total under "all". */
export async function cpuByKind(marker: string, seconds: number): Promise<Map<string, number>> {
  const before = (await treeTicks([marker])).get(marker) ?? new Map();
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const after = (await treeTicks([marker])).get(marker) ?? new Map();
  return cpuBetween(before, after, (performance.now() - t0) / 1000);
}

/**
 * PSS of a tree in MB. Reading smaps_rollup holds each process's mmap lock and can stall
 * Chromium's audio for 100-300 ms (worker/browser/launch.ts): callers read it once, near the end,
 * and leave that stretch out of the gap count.
 */
export async function pssMb(marker: string): Promise<number> {
  return (await pssBytes(await treePids(marker))) / 2 ** 20;
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))] ?? NaN;
}

/** An A/B setting's words: "a b  c" → ["a", "b", "c"]; absent → []. */
export const words = (s: string | undefined): string[] => (s ?? "").split(/\s+/).filter(Boolean);

/** An A/B environment setting, "NAME=value NAME2=value", as an object. */
export const envPairs = (s: string | undefined): Record<string, string> =>
  Object.fromEntries(words(s).map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]));

export const mean = (values: number[]): number => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : NaN);

/** The machine and its load, printed with every figure (the box is shared). */
export function machine(): string {
  const load = execFileSync("uptime", { encoding: "utf8" }).trim();
  return `${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${(totalmem() / 2 ** 30).toFixed(0)} GB; ${load}`;
}
