/**
 * What the speaker timeline's observation costs per bot (issue #17), measured as a paired A/B in
 * one run: a second control plane with SPEAKER_TIMELINE off beside the bench's own (on), and
 * bots of both joined at the same moment into meetings where four scripted people speak in turns
 * the whole time. Both halves share the machine's load at every instant, so a noisy shared box
 * shifts both alike; the figure is the difference of the means, with the spread of each half.
 */
import { join } from "node:path";
import { createBotFeature } from "../../control/bot/feature.ts";
import { sessionPaths } from "../../control/bot/paths.ts";
import { parseConfig } from "../../control/config/index.ts";
import { startServer, type RunningServer } from "../../control/server.ts";
import { createLogger } from "../../shared/log/logger.ts";
import type { ScriptedPerson } from "../../test/fixture/teams/participants.ts";
import type { startTeamsFixture } from "../../test/fixture/teams/server.ts";
import { cpuByKind, machine, mean, percentile } from "./measure.ts";

type Json = Record<string, unknown>;
type Fixture = Awaited<ReturnType<typeof startTeamsFixture>>;

export interface ObserveTarget {
  url: string;
  recordingsDir: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Four people taking 2-4 s turns, with short overlaps, for the whole `seconds` (and a margin). */
export function talkingPeople(seconds: number): ScriptedPerson[] {
  const names = ["Ada Lovelace", "Grace Hopper", "Katherine Johnson", "Alan Turing"];
  const people: ScriptedPerson[] = names.map((name, i) => ({ name, frequency: 440 + 220 * i, speak: [] }));
  let at = 1;
  for (let turn = 0; at < seconds + 30; turn++) {
    const length = 2 + (turn % 3);
    people[turn % people.length]?.speak?.push([at, at + length]);
    at += length - 0.3;
  }
  return people;
}

export async function api(target: ObserveTarget, method: string, path: string, body?: unknown): Promise<Json> {
  const res = await fetch(`${target.url}${path}`, { method, headers: body ? { "content-type": "application/json" } : {}, body: body ? JSON.stringify(body) : undefined });
  return (await res.json()) as Json;
}

export async function waitStatus(target: ObserveTarget, id: string, wanted: string): Promise<void> {
  const deadline = Date.now() + 180_000;
  for (;;) {
    const s = await api(target, "GET", `/status/${id}`);
    if (s.status === wanted) return;
    if (["error", "interrupted", "not_admitted", "denied", "stopped"].includes(String(s.status))) throw new Error(`session ${id} ended ${JSON.stringify(s)}`);
    if (Date.now() > deadline) throw new Error(`session ${id} stuck in ${String(s.status)}`);
    await sleep(100);
  }
}

/** One bot: joined, recording, CPU of its tree (by process kind, "all" the sum) over the middle half of `seconds`, stopped. */
async function cpuOfBot(target: ObserveTarget, fixture: Fixture, n: number, seconds: number): Promise<Map<string, number>> {
  const meeting = fixture.createMeeting({ lobby: false, people: talkingPeople(seconds) });
  const joined = await api(target, "POST", "/join", { meeting_url: meeting.joinUrl, display_name: `Observe ${n}` });
  const id = String((joined.session as Json).session_id);
  await waitStatus(target, id, "recording");
  await sleep((seconds * 1000) / 4);
  const cpu = await cpuByKind(sessionPaths(target.recordingsDir, id, "wav").sessionDir, seconds / 2);
  await api(target, "POST", `/stop/${id}`);
  return cpu;
}

/** A control plane like the bench's own, without a warm pool: with the observation or without. */
export async function startPlane(dir: string, hostPort: string, maxSessions: number, observe: boolean, name: string): Promise<{ target: ObserveTarget; server: RunningServer }> {
  const recordingsDir = join(dir, `recordings-${name}`);
  const config = parseConfig({
    server: { PORT: 0, HOST: "127.0.0.1", DATABASE_URL: `file:${join(dir, `${name}.db`)}`, LOG_LEVEL: "warn" },
    LocalLogin: { Enabled: false },
    bot: { RECORDINGS_DIR: recordingsDir, MEETING_ALLOWED_HOSTS: hostPort, MAX_CONCURRENT_SESSIONS: maxSessions, WARM_WORKERS: 0, SPEAKER_TIMELINE: observe },
  });
  const server = await startServer(config, createLogger({ level: "warn" }), { features: [createBotFeature({ storage: { backend: "local" } })] });
  return { target: { url: server.url, recordingsDir }, server };
}

const spread = (values: number[]): string => (values.length ? `${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)}` : "-");

/** Runs `pairs` bots on each side at once; prints both means and their difference. */
export async function observationCost(observed: ObserveTarget, unobserved: ObserveTarget, fixture: Fixture, pairs: number, seconds: number): Promise<void> {
  console.log(`\nobservation A/B: ${pairs} bots observing + ${pairs} not, at once, ${seconds} s, four people speaking in turns; ${machine()}`);
  const sides = await Promise.all([
    Promise.allSettled(Array.from({ length: pairs }, (_, i) => cpuOfBot(observed, fixture, 200 + i, seconds))),
    Promise.allSettled(Array.from({ length: pairs }, (_, i) => cpuOfBot(unobserved, fixture, 300 + i, seconds))),
  ]);
  const [onKinds = [], offKinds = []] = sides.map((results) => results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : [])));
  const [on, off] = [onKinds, offKinds].map((side) => side.map((k) => k.get("all") ?? 0));
  for (const [name, results] of [["observing", sides[0]], ["not observing", sides[1]]] as const) {
    for (const r of results) if (r.status === "rejected") console.log(`  ${name}: a bot failed: ${String(r.reason)}`);
  }
  console.log(`  observing:     CPU mean ${mean(on ?? []).toFixed(2)} % of a core (per bot ${spread(on ?? [])}, n=${on?.length ?? 0})`);
  console.log(`  not observing: CPU mean ${mean(off ?? []).toFixed(2)} % of a core (per bot ${spread(off ?? [])}, n=${off?.length ?? 0})`);
  const kinds = [...new Set([...onKinds, ...offKinds].flatMap((k) => [...k.keys()]))].filter((k) => k !== "all").sort();
  const meanOf = (side: Map<string, number>[], kind: string) => mean(side.map((k) => k.get(kind) ?? 0));
  for (const kind of kinds) console.log(`  ${kind.padEnd(24)} observing ${meanOf(onKinds, kind).toFixed(2).padStart(6)}  not ${meanOf(offKinds, kind).toFixed(2).padStart(6)}  diff ${(meanOf(onKinds, kind) - meanOf(offKinds, kind)).toFixed(2).padStart(6)} % of a core`);
  console.log(`observation cost per bot (mean observing − not): ${(mean(on ?? []) - mean(off ?? [])).toFixed(2)} % of a core; ${machine()}`);
  // One bot slowed by a neighbour's burst moves a mean of three by a third of its excess: the medians resist it.
  console.log(`  median observing − median not: ${(percentile(on ?? [], 50) - percentile(off ?? [], 50)).toFixed(2)} % of a core; per bot observing ${(on ?? []).map((v) => v.toFixed(2)).join(" ")}, not ${(off ?? []).map((v) => v.toFixed(2)).join(" ")}`);
}
