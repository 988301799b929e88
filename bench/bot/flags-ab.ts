/**
 * A/B of Chromium flags for one bot (`node --import tsx bench/bot/flags-ab.ts`): the worker's
 * PulseAudio and Chromium (launch.ts flags, video guard on) in the fixture's realistic meeting,
 * once with AB_FLAGS added and once without, AB_ROUNDS times interleaved (A, B, A, B …) so that
 * a change in the machine's load hits both sides. Prints CPU (% of a core) and PSS of the tree
 * and its process count per run, then the means. No ffmpeg: flags do not touch it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger } from "../../shared/log/logger.ts";
import { startPulse } from "../../worker/audio/pulse.ts";
import { launchBrowser } from "../../worker/browser/launch.ts";
import { joinMeeting } from "../../worker/teams/index.ts";
import { startTeamsFixture } from "../../test/fixture/teams/server.ts";
import { cpuPercent, machine, mean, pssMb, treePids } from "./measure.ts";

const FLAGS = (process.env.AB_FLAGS ?? "").split(/\s+/).filter(Boolean);
const ROUNDS = Number(process.env.AB_ROUNDS ?? 3);
const SECONDS = Number(process.env.AB_SECONDS ?? 20);
const VIDEO = process.env.AB_VIDEO !== "0";
const logger = createLogger({ level: "warn" });
const fixture = await startTeamsFixture();

async function run(extraArgs: string[]): Promise<{ cpu: number; pss: number; procs: number }> {
  const dir = mkdtempSync(join(tmpdir(), "flags-ab-"));
  const pulse = await startPulse({ dir, logger, mic: false });
  const browser = await launchBrowser({ dir, pulseEnv: pulse.env, logger, mic: false, extraArgs });
  try {
    const meeting = fixture.createMeeting({ lobby: false, churn: true, video: VIDEO ? true : null });
    const joined = await joinMeeting(browser.page, { url: meeting.joinUrl, displayName: "AB", logger });
    if (joined.kind !== "in_call") throw new Error(JSON.stringify(joined));
    await new Promise((r) => setTimeout(r, 5000));
    const cpu = await cpuPercent(dir, SECONDS);
    const pss = await pssMb(dir);
    return { cpu, pss, procs: (await treePids(dir)).length };
  } finally {
    await browser.close();
    await pulse.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(`flags-ab: B adds [${FLAGS.join(" ")}]; ${ROUNDS} rounds × ${SECONDS} s, video ${VIDEO ? "on" : "off"}; ${machine()}`);
const a: Awaited<ReturnType<typeof run>>[] = [];
const b: Awaited<ReturnType<typeof run>>[] = [];
try {
  for (let i = 0; i < ROUNDS; i++) {
    for (const [side, list, args] of [["A", a, []], ["B", b, FLAGS]] as const) {
      const r = await run([...args]);
      list.push(r);
      console.log(`${side}${i + 1}: CPU ${r.cpu.toFixed(1)} % core, PSS ${r.pss.toFixed(0)} MB, ${r.procs} processes`);
    }
  }
  const line = (side: string, l: typeof a) => `${side}: CPU ${mean(l.map((r) => r.cpu)).toFixed(1)} % core, PSS ${mean(l.map((r) => r.pss)).toFixed(0)} MB, ${mean(l.map((r) => r.procs)).toFixed(1)} processes`;
  console.log(line("mean A", a));
  console.log(line("mean B", b));
  console.log(`end: ${machine()}`);
} finally {
  await fixture.close();
}
