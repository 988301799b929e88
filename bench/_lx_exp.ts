// Listening path cost experiment: a worker-like PulseAudio, a tone played into rec, variants of the tap.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger } from "../shared/log/logger.ts";
import { startPulse } from "../worker/audio/pulse.ts";
import { sumCpuTicks } from "../shared/process/proc-stat.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const dir = mkdtempSync(join(tmpdir(), "lx-"));
const pulse = await startPulse({ dir, logger: createLogger({ level: "warn" }), mic: false });
const env = { ...process.env, ...pulse.env };
// a tone into rec, paced by pulse, 20 ms latency like chromium-ish
const tone = spawn("sh", ["-c", "sox -n -t raw -r 48000 -c 2 -b 16 -e signed - synth 3600 sine 440 | pacat --raw --rate=48000 --channels=2 --format=s16le --latency-msec=500 --device=rec"], { env, stdio: "ignore" });
await sleep(2000);
const SECONDS = Number(process.env.S ?? 15);

type Variant = { name: string; start: () => ChildProcess[] };
const parec = (lat: number, rate = 48000, ch = 2) => spawn("parec", ["--raw", "--format=s16le", `--rate=${rate}`, `--channels=${ch}`, `--latency-msec=${lat}`, "--device=rec.monitor"], { env, stdio: ["ignore", "pipe", "ignore"] });
const ffmpeg = () => spawn("ffmpeg", ["-hide_banner", "-nostats", "-loglevel", "warning", "-fflags", "nobuffer", "-probesize", "32", "-analyzeduration", "0", "-f", "s16le", "-ar", "48000", "-ac", "2", "-i", "pipe:0", "-af", "aresample=resampler=swr", "-ar", "16000", "-ac", "1", "-f", "s16le", "-flush_packets", "1", "pipe:1"], { stdio: ["pipe", "pipe", "ignore"] });
let nodeBytes = 0;
const variants: Variant[] = [
  { name: "idle", start: () => [] },
  { name: "parec20", start: () => { const p = parec(20); p.stdout!.on("data", (c: Buffer) => (nodeBytes += c.length)); return [p]; } },
  { name: "parec40", start: () => { const p = parec(40); p.stdout!.on("data", (c: Buffer) => (nodeBytes += c.length)); return [p]; } },
  { name: "parec20+ffmpeg", start: () => { const p = parec(20); const f = ffmpeg(); p.stdout!.on("data", (c: Buffer) => f.stdin!.write(c)); f.stdout!.on("data", (c: Buffer) => (nodeBytes += c.length)); return [p, f]; } },
  { name: "parec20@16k1", start: () => { const p = parec(20, 16000, 1); p.stdout!.on("data", (c: Buffer) => (nodeBytes += c.length)); return [p]; } },
];
const only = process.env.V?.split(",");
const results: Record<string, { pulse: number; procs: number; node: number; total: number }[]> = {};
const self = process.pid;
for (let round = 0; round < Number(process.env.R ?? 2); round++) {
  for (const v of variants.filter((x) => !only || only.includes(x.name))) {
    const procs = v.start();
    await sleep(1500);
    const pids = procs.map((p) => p.pid!);
    const t0 = { pulse: await sumCpuTicks([pulse.pid]), procs: await sumCpuTicks(pids), node: await sumCpuTicks([self]), at: performance.now() };
    await sleep(SECONDS * 1000);
    const s = (performance.now() - t0.at) / 1000;
    const pct = (a: number, b: number) => Number((((a - b) / 100 / s) * 100).toFixed(2));
    const r = { pulse: pct(await sumCpuTicks([pulse.pid]), t0.pulse), procs: pct(await sumCpuTicks(pids), t0.procs), node: pct(await sumCpuTicks([self]), t0.node), total: 0 };
    r.total = Number((r.pulse + r.procs + r.node).toFixed(2));
    (results[v.name] ??= []).push(r);
    for (const p of procs) p.kill("SIGKILL");
    await sleep(500);
  }
}
console.log(JSON.stringify(results));
tone.kill("SIGKILL");
await pulse.stop();
process.exit(0);
