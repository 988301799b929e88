/**
 * Where the time of `/join` → lobby goes: each session's steps.json (worker/evidence/steps.ts)
 * read after the stop, every stage's first time taken from the `/join` call, printed as p50 / max
 * over the sessions in the order the stages came.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { TICKS_PER_SECOND } from "../../shared/process/proc-stat.ts";
import { percentile, type TreeTicks } from "./measure.ts";

interface Step {
  at: string;
  stage: string;
}

/** `joinedAt` is the epoch ms of the `/join` call of each session, `answeredAt` of its answer. */
export async function printJoinPhases(recordingsDir: string, sessions: { id: string; joinedAt: number; answeredAt: number }[]): Promise<void> {
  const byStage = new Map<string, number[]>([["(/join answered)", sessions.map((s) => (s.answeredAt - s.joinedAt) / 1000)]]);
  for (const { id, joinedAt } of sessions) {
    let steps: Step[];
    try {
      steps = (JSON.parse(await readFile(join(recordingsDir, ".evidence", id, "steps.json"), "utf8")) as { steps: Step[] }).steps;
    } catch {
      continue;
    }
    const seen = new Set<string>();
    for (const s of steps) {
      if (seen.has(s.stage)) continue;
      seen.add(s.stage);
      const list = byStage.get(s.stage) ?? [];
      list.push((Date.parse(s.at) - joinedAt) / 1000);
      byStage.set(s.stage, list);
    }
  }
  const rows = [...byStage].map(([stage, secs]) => ({ stage, n: secs.length, p50: percentile(secs, 50), max: Math.max(...secs) })).sort((a, b) => a.p50 - b.p50);
  console.log("  stage (first time, s after /join)   n    p50    max");
  for (const r of rows) console.log(`  ${r.stage.padEnd(34)} ${String(r.n).padStart(2)} ${r.p50.toFixed(2).padStart(6)} ${r.max.toFixed(2).padStart(6)}`);
}

/**
 * What a worker's tree had spent when its session reached the lobby, since the tree started (a
 * warm worker's warm-up included): mean core-seconds per join, in all and per process kind.
 */
export function printJoinCpu(perJoin: TreeTicks[]): void {
  if (perJoin.length === 0) return;
  const kinds = new Map<string, number>();
  for (const tree of perJoin) for (const { kind, ticks } of tree.values()) kinds.set(kind, (kinds.get(kind) ?? 0) + ticks / TICKS_PER_SECOND / perJoin.length);
  const all = [...kinds.values()].reduce((a, b) => a + b, 0);
  const parts = [...kinds].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v.toFixed(2)}`);
  console.log(`  CPU of the tree at the lobby, since it started: ${all.toFixed(2)} core-s per join (${parts.join(", ")})`);
}
