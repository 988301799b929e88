/**
 * `make bench-bot`: bots against the local Teams fixture, printed as the README's table. Asserts
 * nothing; the machine and its load are printed with the figures (the box is shared).
 *
 * 1. One idle warm worker (WARM_WORKERS): CPU and PSS of its tree over BENCH_IDLE_SECONDS.
 * 2. `/join` → lobby, one join at a time on a ready warm worker (BENCH_SINGLE_JOINS), then
 *    BENCH_BURST joins at once: p50 / p95.
 * 3. BENCH_BOTS bots recording for BENCH_SECONDS in the realistic meeting (a changing page; with
 *    video: three 1280×720 30 fps cameras), per BENCH_VIDEO (off, on, or both): per bot CPU (% of
 *    one core, over the middle half) and PSS summed over the worker's process tree (every bot's at
 *    one moment, before any stops), gaps > 100 ms,
 *    audio written against wall time over the middle half (rec-vs-wall: the slope of the WAV's
 *    size against its write times; the whole file's length
 *    and joined_at → ended_at are printed too: they differ by the trim margin and the stop), frames
 *    the bot decoded.
 *
 * 4. What the speaker timeline's observation costs per bot (issue #17): BENCH_OBSERVE_PAIRS bots
 *    observing and as many not (a second control plane with SPEAKER_TIMELINE off), joined at
 *    once into meetings where people speak in turns, for BENCH_OBSERVE_SECONDS (bench/bot/observe-ab.ts).
 *
 * 5. The same cost within each bot (bench/bot/observe-within.ts): BENCH_OBSERVE_WITHIN_BOTS bots
 *    that observe and pause in turns of BENCH_OBSERVE_PERIOD_MS, BENCH_OBSERVE_WITHIN_PAIRS
 *    observed/paused window pairs each: the paired figure the spread between bots does not blur.
 *
 * BENCH_OBSERVE=off runs every part without the observation (SPEAKER_TIMELINE=false), and skips 4
 * and 5. BENCH_BOTS=0 BENCH_SINGLE_JOINS=0 BENCH_BURST=0 BENCH_WARM_WORKERS=0 runs parts 4 and 5
 * alone (BENCH_OBSERVE_PAIRS=0: 5 alone).
 * BENCH_VIDEO_GUARD=0 runs the workers without the video guard, in meetings that do not offer
 * "Turn off incoming video" (the A/B figure of what the guard saves).
 * BENCH_AUDIO_SERVICE_RR=0 leaves the audio service's pulse threads at their nice value
 * (worker/browser/audio-priority.ts), the A/B of making them real-time.
 * BENCH_BROWSER_STARTS sets BROWSER_STARTS_AT_ONCE (0, the default: one per CPU core; 64: all at once).
 * BENCH_PAUSE_DRAWING=0 keeps the bots' pages drawing in the call (worker/browser/drawing.ts).
 * BENCH_PULSE_LATENCY_MS sets the browser's PulseAudio buffer (worker/browser/launch.ts), for the
 * gap count of a shorter one (the latency of live listening sits mostly there).
 * BENCH_RECORD_FRAGMENT_MS sets ffmpeg's pulse input fragment (worker/audio/recorder.ts).
 * Holds the media lock (test/harness/media-lock.ts) as bench-listen does: Chromium-heavy runs of
 * this machine take turns.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBotFeature } from "../control/bot/feature.ts";
import { sessionPaths } from "../control/bot/paths.ts";
import { parseConfig } from "../control/config/index.ts";
import { startServer } from "../control/server.ts";
import { createLogger } from "../shared/log/logger.ts";
import { listProcesses } from "../shared/process/group.ts";
import { startTeamsFixture, type FixtureMeeting } from "../test/fixture/teams/server.ts";
import { decodeToWav, readWav, channel } from "../test/helpers/audio/wav.ts";
import { findGaps } from "../test/helpers/audio/analysis.ts";
import { workers } from "../test/bot/fixtures/warm.ts";
import { holdMediaLock } from "../test/harness/media-lock.ts";
import { cpuPercent, machine, mean, percentile, pssMb, treeTicks, type TreeTicks } from "./bot/measure.ts";
import { printJoinCpu, printJoinPhases } from "./bot/join-phases.ts";
import { observationCost, startPlane } from "./bot/observe-ab.ts";
import { observationCostWithin } from "./bot/observe-within.ts";

const env = process.env;
const BOTS = Number(env.BENCH_BOTS ?? 12);
const SECONDS = Number(env.BENCH_SECONDS ?? 120);
const SINGLE = Number(env.BENCH_SINGLE_JOINS ?? 5);
const BURST = Number(env.BENCH_BURST ?? 8);
const IDLE_SECONDS = Number(env.BENCH_IDLE_SECONDS ?? 10);
const WARM = Number(env.BENCH_WARM_WORKERS ?? 1);
const OBSERVE = env.BENCH_OBSERVE !== "off";
const OBSERVE_PAIRS = OBSERVE ? Number(env.BENCH_OBSERVE_PAIRS ?? 3) : 0;
const OBSERVE_SECONDS = Number(env.BENCH_OBSERVE_SECONDS ?? SECONDS);
const WITHIN_BOTS = OBSERVE ? Number(env.BENCH_OBSERVE_WITHIN_BOTS ?? 3) : 0;
const WITHIN_PAIRS = Number(env.BENCH_OBSERVE_WITHIN_PAIRS ?? 6);
const WITHIN_PERIOD_MS = Number(env.BENCH_OBSERVE_PERIOD_MS ?? 10_000);
const VIDEO_MODES: boolean[] = env.BENCH_VIDEO === "on" ? [true] : env.BENCH_VIDEO === "off" ? [false] : [false, true];
if (env.BENCH_VIDEO_GUARD === "0") process.env.TOAMAISUTAA_VIDEO_GUARD = "0";
if (env.BENCH_AUDIO_SERVICE_RR === "0") process.env.TOAMAISUTAA_AUDIO_SERVICE_RR = "0";
if (env.BENCH_PAUSE_DRAWING === "0") process.env.TOAMAISUTAA_PAUSE_DRAWING = "0";
if (env.BENCH_PULSE_LATENCY_MS) process.env.TOAMAISUTAA_PULSE_LATENCY_MSEC = env.BENCH_PULSE_LATENCY_MS;
if (env.BENCH_RECORD_FRAGMENT_MS) process.env.TOAMAISUTAA_RECORD_FRAGMENT_MSEC = env.BENCH_RECORD_FRAGMENT_MS;

await holdMediaLock();
const dir = mkdtempSync(join(tmpdir(), "bench-bot-"));
const recordingsDir = join(dir, "recordings");
const fixture = await startTeamsFixture();
const config = parseConfig({
  server: { PORT: 0, HOST: "127.0.0.1", DATABASE_URL: `file:${join(dir, "app.db")}`, LOG_LEVEL: "warn" },
  LocalLogin: { Enabled: false },
  bot: { RECORDINGS_DIR: recordingsDir, MEETING_ALLOWED_HOSTS: fixture.hostPort, MAX_CONCURRENT_SESSIONS: Math.max(BOTS, BURST, OBSERVE_PAIRS, 1), WARM_WORKERS: WARM, SPEAKER_TIMELINE: OBSERVE, BROWSER_STARTS_AT_ONCE: Number(env.BENCH_BROWSER_STARTS ?? 0) },
});
const server = await startServer(config, createLogger({ level: "warn" }), { features: [createBotFeature({ storage: { backend: "local" } })] });

type Json = Record<string, unknown>;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function api(method: string, path: string, body?: unknown): Promise<Json> {
  const res = await fetch(`${server.url}${path}`, { method, headers: body ? { "content-type": "application/json" } : {}, body: body ? JSON.stringify(body) : undefined });
  return (await res.json()) as Json;
}

const markerOf = (id: string) => sessionPaths(recordingsDir, id, "wav").sessionDir;

/** The id of a warm worker whose Chromium is up (null when WARM_WORKERS is 0). */
async function readyWarm(timeoutMs = 120_000): Promise<string | null> {
  if (WARM <= 0) return null;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const procs = await listProcesses();
    for (const w of (await workers(recordingsDir)).filter((x) => x.warm)) {
      if (procs.some((p) => p.cmdline.includes(`${w.id}.work/chromium-profile-`) && !p.cmdline.includes("--type="))) return w.id;
    }
    await sleep(100);
  }
  throw new Error("no warm worker became ready");
}

async function waitStatus(id: string, wanted: string[], stepMs = 50, timeoutMs = 180_000): Promise<Json> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await api("GET", `/status/${id}`);
    if (wanted.includes(String(s.status))) return s;
    if (["error", "interrupted", "not_admitted", "denied"].includes(String(s.status))) throw new Error(`session ${id} ended ${JSON.stringify(s)}`);
    if (Date.now() > deadline) throw new Error(`session ${id} stuck in ${String(s.status)}`);
    await sleep(stepMs);
  }
}

async function stop(id: string): Promise<Json> {
  await api("POST", `/stop/${id}`);
  return waitStatus(id, ["stopped"], 100);
}

/** `/join` → the API reports `lobby`; whether the session took a warm worker. */
async function joinToLobby(n: number): Promise<{ ms: number; id: string; warm: boolean; joinedAt: number; answeredAt: number; ticks: TreeTicks }> {
  const meeting = fixture.createMeeting({ lobby: true });
  const warmIds = new Set((await workers(recordingsDir)).filter((w) => w.warm).map((w) => w.id));
  const joinedAt = Date.now();
  const t0 = performance.now();
  const joined = await api("POST", "/join", { meeting_url: meeting.joinUrl, display_name: `Bench ${n}` });
  const answeredAt = Date.now();
  const id = String((joined.session as Json).session_id);
  await waitStatus(id, ["lobby"]);
  const ms = performance.now() - t0;
  // Everything the tree has spent since it started (a warm worker's warm-up included).
  const ticks: TreeTicks = (await treeTicks([markerOf(id)])).get(markerOf(id)) ?? new Map();
  return { ms, id, warm: warmIds.has(id), joinedAt, answeredAt, ticks };
}

interface Steady {
  id: string;
  video: boolean;
  joinMs: number;
  cpu: number;
  pss: number;
  recordedSec: number;
  wallSec: number;
  /** Audio written by ffmpeg during the CPU window against the wall time it took, in % (0 = no drift or loss). */
  driftPct: number;
  gaps: number;
  framesDecoded: number | null;
}

/**
 * A point every bot of a run reaches before any goes on: PSS divides a shared page among the
 * processes that map it, so a bot read after others had stopped counted their share of Chromium's
 * pages too (the last joiners read 50-100 MB heavier than the rest). A bot that fails arrives too.
 */
function rendezvous(count: number): { arrive: () => Promise<void> } {
  let left = count;
  let open!: () => void;
  const all = new Promise<void>((resolve) => (open = resolve));
  return {
    arrive: () => {
      if (--left <= 0) open();
      return all;
    },
  };
}

async function steadyBot(n: number, video: boolean, pssMoment: { arrive: () => Promise<void> }): Promise<Steady> {
  let arrived = false;
  const arrive = () => {
    if (arrived) return Promise.resolve();
    arrived = true;
    return pssMoment.arrive();
  };
  try {
    return await steadyBotRun(n, video, arrive);
  } finally {
    void arrive();
  }
}

async function steadyBotRun(n: number, video: boolean, pssMoment: () => Promise<void>): Promise<Steady> {
  // Without the guard, the meeting offers no "Turn off incoming video" either: the A/B then
  // measures what receiving and decoding the video costs.
  const meeting: FixtureMeeting = fixture.createMeeting({ lobby: false, tone: { frequency: 440 }, churn: true, video: video ? true : null, offersVideoOff: env.BENCH_VIDEO_GUARD !== "0" });
  const t0 = performance.now();
  const joined = await api("POST", "/join", { meeting_url: meeting.joinUrl, display_name: `Bench ${n}` });
  const id = String((joined.session as Json).session_id);
  await waitStatus(id, ["recording"], 100);
  const joinMs = performance.now() - t0;
  // The middle half of the run, after Chromium's start-up burst.
  await sleep((SECONDS * 1000) / 4);
  // Recording vs wall time: the WAV in progress grows by 192,000 bytes (48 kHz, 16 bit, stereo)
  // per second of audio; over the same window as the CPU figure, independent of the trim at
  // admission and of how long the stop takes.
  const wavPath = sessionPaths(recordingsDir, id, "wav").recording;
  const [cpu, bytesPerSecond] = await Promise.all([cpuPercent(markerOf(id), SECONDS / 2), growthRate(wavPath, SECONDS / 2)]);
  const driftPct = (bytesPerSecond / 192_000 - 1) * 100;
  await sleep(Math.max(0, (SECONDS * 1000) / 4 - 2000));
  await pssMoment();
  const pssAt = performance.now();
  const pss = await pssMb(markerOf(id));
  await sleep(1000);
  const framesDecoded = meeting.state().media?.framesDecoded ?? null;
  const tailSec = (performance.now() - pssAt) / 1000 + 0.5;
  const done = await stop(id);
  const file = String(done.recording_file);
  const wav = await readWav(file.endsWith(".flac") ? await decodeToWav(file) : file);
  // The PSS read may stall the audio: the stretch after it is left out.
  const gaps = findGaps(channel(wav, 0), wav.sampleRate, { minGapMs: 100 }).filter((g) => g.startSec < wav.durationSec - tailSec).length;
  const wallSec = (Date.parse(String(done.ended_at)) - Date.parse(String(done.joined_at))) / 1000;
  return { id, video, joinMs, cpu, pss, recordedSec: wav.durationSec, wallSec, driftPct, gaps, framesDecoded };
}

/**
 * How fast the WAV in progress grows, in bytes per second of wall time, over `seconds`: the
 * slope of a least-squares line through (mtime, size) read every 250 ms. ffmpeg writes once per
 * pulse fragment and the null sink renders ahead in blocks of up to that size, so any two reads
 * are each up to 200 ms off (0.7 % of a 30 s window); the line through ~100 of them is not.
 */
async function growthRate(path: string, seconds: number): Promise<number> {
  const points: { t: number; size: number }[] = [];
  const until = performance.now() + seconds * 1000;
  while (performance.now() < until) {
    const { size, mtimeMs } = await stat(path);
    if (points.at(-1)?.t !== mtimeMs / 1000) points.push({ t: mtimeMs / 1000, size });
    await sleep(250);
  }
  const n = points.length;
  const mt = points.reduce((a, p) => a + p.t, 0) / n;
  const ms = points.reduce((a, p) => a + p.size, 0) / n;
  const cov = points.reduce((a, p) => a + (p.t - mt) * (p.size - ms), 0);
  const varT = points.reduce((a, p) => a + (p.t - mt) ** 2, 0);
  return cov / varT;
}

/** The live detector's view (#13): toa_bot_audio_gaps_total and toa_bot_audio_gap_seconds_total now. */
async function liveGaps(): Promise<{ gaps: number; seconds: number }> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1] ?? 0);
  return { gaps: value("toa_bot_audio_gaps_total"), seconds: value("toa_bot_audio_gap_seconds_total") };
}

const f = (v: number, d = 1) => (Number.isFinite(v) ? v.toFixed(d) : "-");
const pad = (s: string, n: number) => s.padStart(n);

try {
  console.log(`bench-bot: ${machine()}`);
  console.log(`settings: BENCH_BOTS=${BOTS} BENCH_SECONDS=${SECONDS} BENCH_SINGLE_JOINS=${SINGLE} BENCH_BURST=${BURST} WARM_WORKERS=${WARM} video guard ${env.BENCH_VIDEO_GUARD === "0" ? "OFF" : "on"} PULSE_LATENCY_MSEC ${env.BENCH_PULSE_LATENCY_MS ?? "default"} ffmpeg's pulse fragment ${env.BENCH_RECORD_FRAGMENT_MS ?? "default"} ms audio service pulse threads ${env.BENCH_AUDIO_SERVICE_RR === "0" ? "nice only" : "SCHED_RR"} page drawing in the call ${env.BENCH_PAUSE_DRAWING === "0" ? "on" : "paused"} browser starts at once ${env.BENCH_BROWSER_STARTS ?? "0 (one per core)"}`);

  if (WARM > 0) {
    const id = await readyWarm();
    await sleep(3000);
    const cpu = await cpuPercent(markerOf(id ?? ""), IDLE_SECONDS);
    const pss = await pssMb(markerOf(id ?? ""));
    console.log(`idle warm worker: CPU ${f(cpu, 2)} % of a core, PSS ${f(pss, 0)} MB (over ${IDLE_SECONDS} s)`);
  }

  const singles: Awaited<ReturnType<typeof joinToLobby>>[] = [];
  for (let i = 1; i <= SINGLE; i++) {
    await readyWarm();
    const r = await joinToLobby(i);
    singles.push(r);
    await stop(r.id);
  }
  if (singles.length > 0) {
    const ms = singles.map((s) => s.ms / 1000);
    console.log(`join → lobby, single${WARM > 0 ? " on a warm worker" : " (cold)"} (n=${ms.length}, ${singles.filter((s) => s.warm).length} warm): p50 ${f(percentile(ms, 50), 2)} s  p95 ${f(percentile(ms, 95), 2)} s`);
    await printJoinPhases(recordingsDir, singles);
    printJoinCpu(singles.map((s) => s.ticks));
  }

  if (BURST > 0) {
    await readyWarm();
    console.log(`burst: ${machine()}`);
    const burst = await Promise.all(Array.from({ length: BURST }, (_, i) => joinToLobby(100 + i)));
    const ms = burst.map((b) => b.ms / 1000);
    console.log(`join → lobby, ${BURST} at once (${burst.filter((b) => b.warm).length} warm): p50 ${f(percentile(ms, 50), 2)} s  p95 ${f(percentile(ms, 95), 2)} s  max ${f(Math.max(...ms), 2)} s`);
    await Promise.all(burst.map((b) => stop(b.id)));
    await printJoinPhases(recordingsDir, burst);
    printJoinCpu(burst.map((s) => s.ticks));
  }

  const byMode = new Map<boolean, Steady[]>();
  for (const video of BOTS > 0 ? VIDEO_MODES : []) {
    await readyWarm();
    console.log(`\nsteady, video ${video ? "on (3 × 1280×720 30 fps)" : "off"}: ${BOTS} bots × ${SECONDS} s; ${machine()}`);
    const live = await liveGaps();
    const pssMoment = rendezvous(BOTS);
    const results = await Promise.allSettled(Array.from({ length: BOTS }, (_, i) => steadyBot(i + 1, video, pssMoment)));
    const liveAfter = await liveGaps();
    console.log("bot  video  join→rec(s)  CPU(%core)  PSS(MB)  rec-vs-wall(%)  recorded(s)  joined→ended(s)  gaps>100ms  frames decoded");
    results.forEach((r, i) => {
      if (r.status === "rejected") return console.log(`${pad(String(i + 1), 3)}  failed: ${String(r.reason)}`);
      const b = r.value;
      console.log(`${pad(String(i + 1), 3)}  ${pad(video ? "on" : "off", 5)}  ${pad(f(b.joinMs / 1000, 2), 11)}  ${pad(f(b.cpu), 10)}  ${pad(f(b.pss, 0), 7)}  ${pad(f(b.driftPct, 2), 14)}  ${pad(f(b.recordedSec, 2), 11)}  ${pad(f(b.wallSec, 2), 15)}  ${pad(String(b.gaps), 10)}  ${pad(b.framesDecoded === null ? "-" : String(b.framesDecoded), 14)}`);
    });
    const ok = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
    byMode.set(video, ok);
    if (ok.length > 0) {
      console.log(`detected live (/metrics, every under-run, whole calls): ${liveAfter.gaps - live.gaps} gaps, ${f(liveAfter.seconds - live.seconds, 2)} s of audio lost`);
      console.log(`mean (video ${video ? "on" : "off"}): CPU ${f(mean(ok.map((b) => b.cpu)))} % core, PSS ${f(mean(ok.map((b) => b.pss)), 0)} MB, gaps ${ok.reduce((s, b) => s + b.gaps, 0)} in all, max |rec-vs-wall| ${f(Math.max(...ok.map((b) => Math.abs(b.driftPct))), 2)} %, join→rec p95 ${f(percentile(ok.map((b) => b.joinMs / 1000), 95), 2)} s`);
    }
  }
  const on = byMode.get(true);
  const off = byMode.get(false);
  if (on?.length && off?.length) console.log(`video cost per bot (mean CPU on − off): ${f(mean(on.map((b) => b.cpu)) - mean(off.map((b) => b.cpu)), 2)} % of a core`);
  if (OBSERVE_PAIRS > 0) {
    const unobserved = await startPlane(dir, fixture.hostPort, OBSERVE_PAIRS, false, "unobserved");
    try {
      await observationCost({ url: server.url, recordingsDir }, unobserved.target, fixture, OBSERVE_PAIRS, OBSERVE_SECONDS);
    } finally {
      await unobserved.server.stop({ graceMs: 10_000 });
    }
  }
  if (WITHIN_BOTS > 0) await observationCostWithin(fixture, dir, WITHIN_BOTS, WITHIN_PAIRS, WITHIN_PERIOD_MS);
  console.log(`end: ${machine()}`);
} finally {
  await server.stop({ graceMs: 10_000 });
  await fixture.close();
  rmSync(dir, { recursive: true, force: true });
}
