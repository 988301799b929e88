/**
 * `make bench-bot`: BENCH_BOTS (default 8) concurrent bots against the local Teams fixture for
 * BENCH_SECONDS (default 60) each. Prints per bot: CPU (% of one core) and PSS memory summed over
 * the worker's process tree (worker, Chromium, ffmpeg, PulseAudio), time from /join to
 * `recording`, and audio continuity (gaps over 100 ms in the continuous tone). Asserts nothing.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readFile } from "node:fs/promises";
import { createBotFeature } from "../control/bot/feature.ts";
import { sessionPaths } from "../control/bot/paths.ts";
import { parseConfig } from "../control/config/index.ts";
import { startServer } from "../control/server.ts";
import { createLogger } from "../shared/log/logger.ts";
import { listProcesses } from "../shared/process/group.ts";
import { pssBytes } from "../worker/browser/processes.ts";
import { startTeamsFixture } from "../test/fixture/teams/server.ts";
import { hear } from "../test/bot/fixtures/media.ts";

const BOTS = Number(process.env.BENCH_BOTS ?? 8);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
/** Linux reports CPU time in clock ticks of 1/100 s (sysconf(_SC_CLK_TCK) on every common arch). */
const CLK_TCK = 100;

const dir = mkdtempSync(join(tmpdir(), "bench-bot-"));
const recordingsDir = join(dir, "recordings");
const fixture = await startTeamsFixture();
const config = parseConfig({
  server: { PORT: 0, HOST: "127.0.0.1", DATABASE_URL: `file:${join(dir, "app.db")}`, LOG_LEVEL: "warn" },
  LocalLogin: { Enabled: false },
  bot: { RECORDINGS_DIR: recordingsDir, MEETING_ALLOWED_HOSTS: fixture.hostPort, MAX_CONCURRENT_SESSIONS: Math.max(8, BOTS) },
});
const server = await startServer(config, createLogger({ level: "warn" }), { features: [createBotFeature({ storage: { backend: "local" } })] });

async function api(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${server.url}${path}`, { method, headers: body ? { "content-type": "application/json" } : {}, body: body ? JSON.stringify(body) : undefined });
  return (await res.json()) as Record<string, unknown>;
}

/** Pids of a session's tree: everything naming its folder, plus the process groups they lead. */
async function treePids(sessionDir: string): Promise<number[]> {
  const all = await listProcesses();
  const groups = new Set(all.filter((p) => p.cmdline.includes(sessionDir)).map((p) => p.pgid));
  return all.filter((p) => groups.has(p.pgid) || p.cmdline.includes(sessionDir)).map((p) => p.pid);
}

async function cpuTicks(pids: number[]): Promise<number> {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const stat = await readFile(`/proc/${pid}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks += Number(f[11]) + Number(f[12]);
    } catch {
      // exited
    }
  }
  return ticks;
}

interface Bot {
  id: string;
  joinMs: number;
  cpuPct: number;
  pssMb: number;
  file: string;
  gaps: number;
  seconds: number;
}

async function runBot(n: number): Promise<Bot> {
  const meeting = fixture.createMeeting({ lobby: false, tone: { frequency: 440 } });
  const t0 = Date.now();
  const joined = await api("POST", "/join", { meeting_url: meeting.joinUrl, display_name: `Bench ${n}` });
  const id = String((joined.session as Record<string, unknown>).session_id);
  let status = "";
  while (status !== "recording") {
    const s = await api("GET", `/status/${id}`);
    status = String(s.status);
    if (["error", "interrupted", "stopped"].includes(status)) throw new Error(`bot ${n} ended ${JSON.stringify(s)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const joinMs = Date.now() - t0;
  const sessionDir = sessionPaths(recordingsDir, id, "wav").sessionDir;
  // Measure over the middle of the run, after Chromium's start-up burst.
  await new Promise((r) => setTimeout(r, (SECONDS * 1000) / 4));
  const pids = await treePids(sessionDir);
  const c1 = await cpuTicks(pids);
  const w1 = Date.now();
  await new Promise((r) => setTimeout(r, (SECONDS * 1000) / 2));
  const pids2 = await treePids(sessionDir);
  const cpuPct = ((await cpuTicks(pids2)) - c1) / CLK_TCK / ((Date.now() - w1) / 1000) * 100;
  const pssMb = (await pssBytes(pids2)) / 2 ** 20;
  await new Promise((r) => setTimeout(r, (SECONDS * 1000) / 4));
  await api("POST", `/stop/${id}`);
  let done: Record<string, unknown> = {};
  for (let i = 0; i < 600 && done.status !== "stopped"; i++) {
    done = await api("GET", `/status/${id}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const heard = await hear(String(done.recording_file));
  return { id, joinMs, cpuPct, pssMb, file: String(done.recording_file), gaps: heard.gaps, seconds: heard.durationSec };
}

try {
  console.log(`bench-bot: ${BOTS} bots × ${SECONDS} s against the local Teams fixture`);
  const results = await Promise.allSettled(Array.from({ length: BOTS }, (_, i) => runBot(i + 1)));
  console.log("bot  join→recording  CPU(%core)  PSS(MB)  recorded(s)  gaps>100ms");
  results.forEach((r, i) => {
    if (r.status === "rejected") return console.log(`${String(i + 1).padStart(3)}  failed: ${String(r.reason)}`);
    const b = r.value;
    console.log(`${String(i + 1).padStart(3)}  ${(b.joinMs / 1000).toFixed(2).padStart(13)} s  ${b.cpuPct.toFixed(1).padStart(10)}  ${b.pssMb.toFixed(0).padStart(7)}  ${b.seconds.toFixed(2).padStart(11)}  ${String(b.gaps).padStart(10)}`);
  });
  const ok = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
  if (ok.length > 0) {
    const avg = (f: (b: Bot) => number): string => (ok.reduce((s, b) => s + f(b), 0) / ok.length).toFixed(1);
    console.log(`mean: join ${avg((b) => b.joinMs / 1000)} s, CPU ${avg((b) => b.cpuPct)} %, PSS ${avg((b) => b.pssMb)} MB, gaps ${avg((b) => b.gaps)}`);
  }
} finally {
  await server.stop({ graceMs: 5_000 });
  await fixture.close();
  rmSync(dir, { recursive: true, force: true });
}
