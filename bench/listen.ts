/**
 * `make bench-listen`: one bot in the local Teams fixture whose meeting plays a tone in bursts
 * (300 ms on, 700 ms off; the page reports each onset, page clock = this machine's clock), and
 * live listeners on the WebSocket. Prints
 *  - latency: from a burst's onset in the meeting (the moment the page renders it into the call's
 *    audio, so the fixture's own WebRTC hop is included) to the arrival of the 20 ms frame that
 *    holds its onset at a 16 kHz mono listener, over BENCH_BURSTS bursts; target median <= 150 ms,
 *    p95 <= 250 ms. Twice: MIC_PLAYBACK_ENABLED off and on, because the browser's PulseAudio
 *    buffer differs (worker/browser/launch.ts: 200 ms without a mic, to keep recordings free of
 *    underrun gaps on a loaded box; Chromium's own ~20 ms with one) and everything the recording
 *    hears passes through it before the tap. `to_rec_sink` is the same onset read by a parec of
 *    this process straight from the recording's source: the part of the latency before the tap;
 *  - CPU, % of one core over BENCH_CPU_SECONDS windows (mic off), with 0 listeners, 1 (16 kHz
 *    mono), 4 of 16 kHz mono (one shared resampler) and 4 of different formats (8k mono, 16k
 *    mono, 24k mono, 48k stereo: a resampler each, the worst case): the worker node process, the
 *    tap (parec) and resamplers (ffmpeg), PulseAudio, this process (the control plane, with the
 *    Teams fixture's own small load) and the consumers (bench/listen-consumer.ts, a process of
 *    their own, reported apart: they are the client's cost, not the service's). Per listener =
 *    service total with N minus with 0, over N; target under 1% of a core.
 * Also the `uptime` load: the machine is shared, read figures against it. Asserts nothing.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createBotFeature } from "../control/bot/feature.ts";
import { sessionPaths } from "../control/bot/paths.ts";
import { parseConfig } from "../control/config/index.ts";
import { startServer } from "../control/server.ts";
import { createLogger } from "../shared/log/logger.ts";
import { listProcesses } from "../shared/process/group.ts";
import { startTeamsFixture } from "../test/fixture/teams/server.ts";
import { holdMediaLock } from "../test/harness/media-lock.ts";
import { burstOnsets, channel, listen, sleep, type Received } from "../test/listen/helpers.ts";

const BURSTS = Number(process.env.BENCH_BURSTS ?? 30);
const CPU_SECONDS = Number(process.env.BENCH_CPU_SECONDS ?? 20);
const CLK_TCK = 100;
const ON_MS = 300;
const OFF_MS = 700;

// Chromium-heavy suites of this machine take turns (test/harness/media-lock.ts); so does this bench,
// which would otherwise starve their audio and its own figures.
await holdMediaLock();
const dir = mkdtempSync(join(tmpdir(), "bench-listen-"));
const fixture = await startTeamsFixture();

async function ticksOf(pids: number[]): Promise<number> {
  let ticks = 0;
  for (const pid of pids) {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    ticks += Number(f[11] ?? 0) + Number(f[12] ?? 0);
  }
  return ticks;
}

async function groups(workDir: string): Promise<Record<string, number[]>> {
  const all = await listProcesses();
  const worker = all.filter((p) => p.cmdline.includes(`--session-dir=${workDir}`)).map((p) => p.pid);
  const kids = all.filter((p) => worker.includes(p.ppid));
  return {
    worker,
    tap: kids.filter((p) => p.cmdline.includes("parec")).map((p) => p.pid),
    resamplers: kids.filter((p) => p.cmdline.includes("ffmpeg") && p.cmdline.includes("aresample")).map((p) => p.pid),
    pulseaudio: kids.filter((p) => p.cmdline.startsWith("pulseaudio")).map((p) => p.pid),
    control_plane: [process.pid],
    consumers: consumerPids,
  };
}

let consumerPids: number[] = [];
/** Starts a consumer process for `urls` (it connects at once); returns its stop. */
async function consumers(urls: string[]): Promise<() => Promise<void>> {
  const child = spawn(process.execPath, ["--import", "tsx", fileURLToPath(new URL("./listen-consumer.ts", import.meta.url)), ...urls], { stdio: ["ignore", "inherit", "inherit"] });
  consumerPids = child.pid ? [child.pid] : [];
  await sleep(2_000);
  return async () => {
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    await exited;
    consumerPids = [];
  };
}

async function cpu(workDir: string): Promise<Record<string, number>> {
  const g = await groups(workDir);
  const before = Object.fromEntries(await Promise.all(Object.entries(g).map(async ([k, pids]) => [k, await ticksOf(pids)] as const)));
  const t0 = performance.now();
  await sleep(CPU_SECONDS * 1000);
  const ms = performance.now() - t0;
  const out: Record<string, number> = {};
  let total = 0;
  for (const [k, pids] of Object.entries(g)) {
    const pct = (((await ticksOf(pids)) - (before[k] ?? 0)) / CLK_TCK / (ms / 1000)) * 100;
    out[k] = Number(pct.toFixed(2));
    if (k !== "consumers") total += pct;
  }
  out.total = Number(total.toFixed(2));
  return out;
}

const uptime = () => execFileSync("uptime").toString().trim();
const quantile = (xs: number[], q: number) => {
  const v = [...xs].sort((a, b) => a - b);
  return v[Math.min(v.length - 1, Math.floor(q * v.length))];
};
const stats = (xs: number[]) => ({
  n: xs.length,
  median: Number(quantile(xs, 0.5)?.toFixed(1)),
  p95: Number(quantile(xs, 0.95)?.toFixed(1)),
  min: Number(Math.min(...xs).toFixed(1)),
  max: Number(Math.max(...xs).toFixed(1)),
});

interface Session {
  api(method: string, path: string, body?: unknown): Promise<Record<string, unknown>>;
  id: string;
  workDir: string;
  meeting: ReturnType<typeof fixture.createMeeting>;
  stop(): Promise<void>;
}

async function startSession(mic: boolean): Promise<Session> {
  const sub = join(dir, mic ? "mic" : "nomic");
  const config = parseConfig({
    server: { PORT: 0, HOST: "127.0.0.1", DATABASE_URL: `file:${join(sub, "app.db")}`, LOG_LEVEL: "warn" },
    LocalLogin: { Enabled: false },
    bot: { RECORDINGS_DIR: join(sub, "recordings"), MEETING_ALLOWED_HOSTS: fixture.hostPort, MIC_PLAYBACK_ENABLED: mic },
  });
  const server = await startServer(config, createLogger({ level: "warn" }), { features: [createBotFeature({ storage: { backend: "local" } })] });
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.url}${path}`, { method, headers: body ? { "content-type": "application/json" } : {}, body: body ? JSON.stringify(body) : undefined });
    return (await res.json()) as Record<string, unknown>;
  };
  const meeting = fixture.createMeeting({ lobby: false, tone: { frequency: 440, burst: { onMs: ON_MS, offMs: OFF_MS } } });
  const joined = await api("POST", "/join", { meeting_url: meeting.joinUrl, display_name: "Bench Listen" });
  const id = String((joined.session as Record<string, unknown>).session_id);
  for (let i = 0; i < 600 && String((await api("GET", `/status/${id}`)).status) !== "recording"; i++) await sleep(200);
  await meeting.waitForPhase("in_call");
  const workDir = sessionPaths(join(sub, "recordings"), id, "wav").workDir;
  return {
    api,
    id,
    workDir,
    meeting,
    async stop() {
      await api("POST", `/stop/${id}`);
      await server.stop({ graceMs: 5000 });
    },
  };
}

async function openListener(s: Session, sample_rate: number, channels: number): Promise<Received & { token: string }> {
  const res = await s.api("POST", `/audio/${s.id}/listen`, { sample_rate, channels, events: false });
  const r = listen(String(res.listen_url));
  await r.opened;
  return { ...r, token: String(res.token) };
}

/** Onset arrival times (epoch ms) of a parec reading the recording's source directly. */
function directTap(workDir: string): { onsets(): number[]; stop(): void } {
  const env = { ...process.env, PULSE_SERVER: `unix:${workDir}/run/native`, HOME: `${workDir}/home`, PULSE_COOKIE: `${workDir}/home/pulse-cookie` };
  const child = spawn("parec", ["--raw", "--format=s16le", "--rate=48000", "--channels=1", "--latency-msec=5", "--device=rec.monitor"], { env });
  const chunks: Buffer[] = [];
  const ends: { end: number; at: number }[] = [];
  let samples = 0;
  child.stdout.on("data", (d: Buffer) => {
    chunks.push(d);
    samples += d.length / 2;
    ends.push({ end: samples, at: performance.timeOrigin + performance.now() });
  });
  return {
    onsets: () => burstOnsets(channel(Buffer.concat(chunks), 1), 48_000).map((s) => ends.find((e) => e.end > s)?.at ?? Number.NaN),
    stop: () => child.kill(),
  };
}

async function latency(s: Session): Promise<Record<string, unknown>> {
  const rate = 16_000;
  const r = await openListener(s, rate, 1);
  const direct = directTap(s.workDir);
  const since = Date.now();
  await sleep((BURSTS + 2) * (ON_MS + OFF_MS));
  direct.stop();
  const perFrame = (rate * 20) / 1000;
  const heard = burstOnsets(channel(Buffer.concat(r.frames), 1), rate).map((x) => r.arrivals[Math.floor(x / perFrame)] ?? Number.NaN);
  const atSink = direct.onsets();
  const toListener: number[] = [];
  const toSink: number[] = [];
  let missed = 0;
  for (const onset of s.meeting.state().toneOnsets.filter((o) => o >= since + 200 && o < Date.now() - 1500)) {
    const l = heard.find((a) => a >= onset && a < onset + ON_MS + OFF_MS);
    const d = atSink.find((a) => a >= onset && a < onset + ON_MS + OFF_MS);
    if (l === undefined) missed++;
    else toListener.push(l - onset);
    if (d !== undefined) toSink.push(d - onset);
  }
  // A token holds one of the session's 4 listener slots until it is revoked.
  await s.api("DELETE", `/audio/${s.id}/listen/${r.token}`);
  await r.closed;
  return { to_listener: { ...stats(toListener), missed }, to_rec_sink: stats(toSink) };
}

try {
  const loadStart = uptime();
  const withMic = await startSession(true);
  const latencyMic = await latency(withMic);
  await withMic.stop();

  const s = await startSession(false);
  const latencyNoMic = await latency(s);
  await sleep(1500);
  const idle = await cpu(s.workDir);
  const slots = async (formats: [number, number][]) => {
    const opened = [];
    for (const [sample_rate, channels] of formats) opened.push(await s.api("POST", `/audio/${s.id}/listen`, { sample_rate, channels, events: false }));
    const stop = await consumers(opened.map((o) => String(o.listen_url)));
    const figures = await cpu(s.workDir);
    await stop();
    for (const o of opened) await s.api("DELETE", `/audio/${s.id}/listen/${String(o.token)}`);
    await sleep(1_500);
    return figures;
  };
  const withOne = await slots([[16_000, 1]]);
  const withFourSame = await slots([[16_000, 1], [16_000, 1], [16_000, 1], [16_000, 1]]);
  const withFourMixed = await slots([[8000, 1], [16_000, 1], [24_000, 1], [48_000, 2]]);
  const per = (withN: Record<string, number>, n: number) => Number((((withN.total ?? 0) - (idle.total ?? 0)) / n).toFixed(2));

  console.log(JSON.stringify({
    latency_ms: { target: { median: 150, p95: 250 }, mic_playback_off: latencyNoMic, mic_playback_on: latencyMic },
    cpu_percent_of_core: {
      no_listener: idle,
      one_16k_mono: withOne,
      four_16k_mono: withFourSame,
      four_mixed_8k1_16k1_24k1_48k2: withFourMixed,
      per_listener: { one: per(withOne, 1), four_same: per(withFourSame, 4), four_mixed: per(withFourMixed, 4), target: 1 },
    },
    load: { start: loadStart, end: uptime() },
  }, null, 2));
  await s.stop();
} finally {
  await fixture.close();
  rmSync(dir, { recursive: true, force: true });
}
