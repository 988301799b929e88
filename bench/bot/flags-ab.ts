/**
 * A/B of Chromium flags for one bot (`node --import tsx bench/bot/flags-ab.ts`): the worker's
 * PulseAudio and Chromium (launch.ts flags, video guard on) in the fixture's realistic meeting,
 * once with AB_FLAGS added and once without (AB_BASE: flags both sides get, to stack a candidate
 * on ones already chosen), AB_ROUNDS times. Each round starts A and B at the same moment and
 * measures them over the same window, so the shared machine's load hits both alike
 * (AB_SEQUENTIAL=1: one after the other, as before). Prints CPU (% of a core) and PSS of the tree
 * and its process count per run, the means, and B/A of the means. No ffmpeg: flags do not touch it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger } from "../../shared/log/logger.ts";
import { startPulse } from "../../worker/audio/pulse.ts";
import { launchBrowser } from "../../worker/browser/launch.ts";
import { pageDrawing } from "../../worker/browser/drawing.ts";
import { joinMeeting } from "../../worker/teams/index.ts";
import { startTeamsFixture } from "../../test/fixture/teams/server.ts";
import { listProcesses } from "../../shared/process/group.ts";
import { TICKS_PER_SECOND, cpuTicks } from "../../shared/process/proc-stat.ts";
import { pssBytes } from "../../worker/browser/processes.ts";
import { cpuPercent, envPairs, machine, mean, pssMb, treePids, words } from "./measure.ts";

const FLAGS = words(process.env.AB_FLAGS);
const BASE = words(process.env.AB_BASE);
/** AB_DSF: B's deviceScaleFactor (the CSS viewport stays 1280×720). */
const DSF = process.env.AB_DSF ? Number(process.env.AB_DSF) : undefined;
/** AB_CSS: a style sheet B's pages get at document start (e.g. one that stops animations). */
const CSS = process.env.AB_CSS;
/** AB_STILL=1: A runs without the still-page sheet (launch.ts stillPage), B with it; otherwise both have it. */
const STILL = process.env.AB_STILL === "1";
/** AB_MINIMIZED=1: B's page stops drawing once in the call (worker/browser/drawing.ts). */
const MINIMIZED = process.env.AB_MINIMIZED === "1";
/** AB_ENV ("NAME=value NAME2=value"): B's browser gets these in its environment too (glibc tunables). */
const ENV = envPairs(process.env.AB_ENV);
const SEQUENTIAL = process.env.AB_SEQUENTIAL === "1";
/** AB_DETAIL=1: also each process's CPU ticks (over the whole run) and PSS, by kind. */
const DETAIL = process.env.AB_DETAIL === "1";
const ROUNDS = Number(process.env.AB_ROUNDS ?? 3);
const SECONDS = Number(process.env.AB_SECONDS ?? 20);
const VIDEO = process.env.AB_VIDEO !== "0";
const logger = createLogger({ level: "warn" });
const fixture = await startTeamsFixture();

/** One line per process of the tree: its kind, CPU seconds since it started, PSS. */
async function detail(dir: string): Promise<string> {
  const pids = new Set(await treePids(dir));
  const lines: string[] = [];
  for (const p of await listProcesses()) {
    if (!pids.has(p.pid)) continue;
    const kind = /--utility-sub-type=(\S+)/.exec(p.cmdline)?.[1] ?? /--type=(\S+)/.exec(p.cmdline)?.[1] ?? p.cmdline.split(" ")[0];
    const cpuS = ((await cpuTicks(p.pid)) ?? 0) / TICKS_PER_SECOND;
    lines.push(`  ${kind?.padEnd(40)} cpu ${cpuS.toFixed(2)} s  pss ${((await pssBytes([p.pid])) / 2 ** 20).toFixed(0)} MB`);
  }
  return lines.join("\n");
}

/** Resolves for everyone once `n` callers wait on it: both sides of a round measure the same window. */
function barrier(n: number): () => Promise<void> {
  let release: () => void = () => undefined;
  const all = new Promise<void>((resolve) => (release = resolve));
  let waiting = 0;
  return () => {
    if (++waiting >= n) release();
    return all;
  };
}

interface Side {
  deviceScaleFactor?: number;
  css?: string;
  stillPage?: boolean;
  minimized?: boolean;
  env?: Record<string, string>;
}
const A_SIDE: Side = STILL ? { stillPage: false } : {};
const B_SIDE: Side = { env: ENV, ...(MINIMIZED ? { minimized: true } : {}), ...(DSF === undefined ? {} : { deviceScaleFactor: DSF }), ...(CSS ? { css: CSS } : {}) };

async function run(extraArgs: string[], joined: () => Promise<void>, { deviceScaleFactor, css, stillPage, minimized, env }: Side): Promise<{ cpu: number; pss: number; procs: number }> {
  const dir = mkdtempSync(join(tmpdir(), "flags-ab-"));
  const pulse = await startPulse({ dir, logger, mic: false });
  const browser = await launchBrowser({ dir, pulseEnv: pulse.env, logger, mic: false, extraArgs, extraEnv: env, deviceScaleFactor, stillPage });
  try {
    if (css) {
      await browser.context.addInitScript(`(() => {
        const add = () => { const s = document.createElement("style"); s.textContent = ${JSON.stringify(css)}; (document.head ?? document.documentElement).append(s); };
        if (document.documentElement) add(); else document.addEventListener("readystatechange", add, { once: true });
      })()`);
    }
    const meeting = fixture.createMeeting({ lobby: false, churn: true, video: VIDEO ? true : null });
    const outcome = await joinMeeting(browser.page, { url: meeting.joinUrl, displayName: "AB", logger }).catch((err: unknown) => {
      void joined(); // the other side must not wait for this one
      throw err;
    });
    if (outcome.kind !== "in_call") {
      void joined();
      throw new Error(JSON.stringify(outcome));
    }
    if (minimized) await pageDrawing(browser.page, logger).pause();
    await joined();
    await new Promise((r) => setTimeout(r, 5000));
    const cpu = await cpuPercent(dir, SECONDS);
    const pss = await pssMb(dir);
    if (DETAIL) console.log(`${extraArgs.join(" ") || "(no flags)"}:\n${await detail(dir)}`);
    return { cpu, pss, procs: (await treePids(dir)).length };
  } finally {
    await browser.close();
    await pulse.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(
  `flags-ab: B adds [${FLAGS.join(" ")}]${DSF === undefined ? "" : ` and deviceScaleFactor ${DSF}`}${CSS ? ` and CSS ${CSS}` : ""}${STILL ? " and the still-page sheet (A has none)" : ""}${MINIMIZED ? " and a minimized window" : ""}${process.env.AB_ENV ? ` and env ${process.env.AB_ENV}` : ""}${BASE.length ? `, both have [${BASE.join(" ")}]` : ""}; ${ROUNDS} rounds × ${SECONDS} s, ${SEQUENTIAL ? "A then B" : "A and B at once"}, video ${VIDEO ? "on" : "off"}; ${machine()}`,
);
type Result = Awaited<ReturnType<typeof run>>;
const a: Result[] = [];
const b: Result[] = [];
const print = (side: string, r: Result) => console.log(`${side}: CPU ${r.cpu.toFixed(1)} % core, PSS ${r.pss.toFixed(0)} MB, ${r.procs} processes`);
try {
  for (let i = 0; i < ROUNDS; i++) {
    let ra: Result;
    let rb: Result;
    if (SEQUENTIAL) {
      ra = await run([...BASE], barrier(1), A_SIDE);
      rb = await run([...BASE, ...FLAGS], barrier(1), B_SIDE);
    } else {
      const joined = barrier(2);
      [ra, rb] = await Promise.all([run([...BASE], joined, A_SIDE), run([...BASE, ...FLAGS], joined, B_SIDE)]);
    }
    a.push(ra);
    b.push(rb);
    print(`A${i + 1}`, ra);
    print(`B${i + 1}`, rb);
  }
  const m = (l: Result[], k: keyof Result) => mean(l.map((r) => r[k]));
  const line = (side: string, l: Result[]) => `${side}: CPU ${m(l, "cpu").toFixed(1)} % core, PSS ${m(l, "pss").toFixed(0)} MB, ${m(l, "procs").toFixed(1)} processes`;
  console.log(line("mean A", a));
  console.log(line("mean B", b));
  console.log(`B/A: CPU ${(m(b, "cpu") / m(a, "cpu")).toFixed(2)}, PSS ${(m(b, "pss") / m(a, "pss")).toFixed(2)}`);
  console.log(`end: ${machine()}`);
} finally {
  await fixture.close();
}
