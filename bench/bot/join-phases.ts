/**
 * Where the time of `/join` → lobby goes: each session's steps.json (worker/evidence/steps.ts)
 * read after the stop, every stage's first time taken from the `/join` call, printed as p50 / max
 * over the sessions in the order the stages came.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { percentile } from "./measure.ts";

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
