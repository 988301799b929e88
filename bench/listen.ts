/**
 * `make bench-listen`: one bot in the local Teams fixture whose meeting plays a tone in bursts
 * (300 ms on, 707 ms off), and live listeners on the WebSocket. Prints
 *  - latency: from a burst's onset in the meeting to the arrival of the 20 ms frame that holds
 *    its onset at a 16 kHz mono listener, over BENCH_BURSTS bursts; target median <= 150 ms,
 *    p95 <= 250 ms. From two sources of the bursts: `page`, an oscillator in the fixture page
 *    (the onset is when the page renders it into the call's audio; it is sent over a WebRTC
 *    hop inside the bot's own browser, whose AudioContext is paced by the browser's PulseAudio
 *    output too, so its sending is as bursty as that buffer, and a burst may be heard before the
 *    page's clock says it began: such latencies are negative), and `server`, the fixture's media
 *    server (a scripted speaker; the onset is the RTP packet that first carries it, paced on the
 *    wall clock as a Teams server sends). Both with MIC_PLAYBACK_ENABLED on and off: the
 *    browser's PulseAudio buffer differs (worker/browser/launch.ts: PULSE_LATENCY_MSEC 500
 *    without a mic, to keep recordings free of underrun gaps on a loaded box; Chromium's own
 *    with one), and so does the tap (worker/listen/taps.ts: without a mic the page tap, which
 *    hears the page before that buffer, with the sink paced while it serves; with one a parec on
 *    the recording's sink). Each onset as heard by a 48 kHz stereo listener and by the 16 kHz
 *    one; with BENCH_STAGES=1 also by parecs of this process straight from the recording's sink
 *    (at 5 ms and 20 ms): off by default, because a record stream with a short fragment makes
 *    the sink render in short blocks, which paces the browser's pulls and changes what is
 *    measured. The bot browser's own figures (`page` only: jitter buffer, playout to the audio
 *    device, from getStats() in the fixture page) and PulseAudio's (`pactl list`: each stream's
 *    buffer and device latency); `each`: every burst's latency in order (a listener's first
 *    seconds are slower: the jitter buffer drains what it held for the sink's 200 ms blocks);
 *  - CPU, % of one core over BENCH_CPU_SECONDS windows, with and without a mic, with 0
 *    listeners, 1 (16 kHz mono), 4 of 16 kHz mono (one shared stream) and 4 of different formats
 *    (8k mono, 16k mono, 24k mono, 48k stereo: the worst case): the worker node process, the
 *    bot's browser by kind of process (main, renderer, audio service, other: the page tap works
 *    in the renderer and its messages cross the main process; a paced sink makes the browser
 *    pull its audio more often), the worker's parecs (taps and the sink pacer; the session's
 *    silence watcher's parec counts here too, in every row), PulseAudio, this process (the
 *    control plane), and apart, not in the totals: the consumers (bench/listen-consumer.ts, the
 *    client's cost) and the Teams fixture (bench/fixture-process.ts, what Teams itself costs),
 *    after one listener has come and gone (warm-up, not counted).
 *    Per listener = service total with N minus with 0, over N; target under 1% of a core. Each
 *    after the first = (total with 4 - total with 1) / 3: what one more listener adds. Over
 *    BENCH_CPU_ROUNDS rounds (default 3; BENCH_CPU_CASES=one|mixed: only the first listener, or
 *    only the four formats), each
 *    case's window against the windows without listeners on either side of it; medians of what
 *    each case added, and their mean ± standard error (listenerCpu). In the server's session
 *    unless BENCH_CPU_SOURCE=page.
 * BENCH_THREADS=1 adds the worker's and the browser's CPU by thread name (`thread <group>/<name>`,
 * not in the totals): a listener's part, thread by thread, through the noise of the rest.
 * BENCH_NETEQ_FORGET_PERMILLE sets the no-mic browser's jitter buffer forget factor (field-trials.ts).
 * BENCH_SETTLE_MS: the bot's time in the call before the first listener (default 0; a listener
 * who comes later finds WebRTC's jitter buffer grown to the sink's 200 ms blocks unless
 * BENCH_LOW_LATENCY=1, the service's LISTEN_LOW_LATENCY, keeps the sink paced all along).
 * BENCH_MIC=on|off and BENCH_SOURCE=page|server run only those sessions; BENCH_CPU=0 skips the
 * CPU figures; BENCH_TAP=page|sink picks the tap whatever the mic; BENCH_PACE_MS sets the sink's
 * block while the page tap serves (worker/listen/sink-pacer.ts); BENCH_TAP_MS sets the sink
 * tap's PulseAudio fragment (worker/listen/capture.ts); BENCH_SEND_MS the page tap's piece
 * (worker/listen/page-tap/page-script.ts); BENCH_ENCODED_BATCH its frames to a message;
 * BENCH_SPREAD_FRAMES the most frames the control plane sends on at once (control/bot/listen/
 * spreader.ts; 64: bursts as they come).
 * Also the `uptime` load: the machine is shared, read figures against it. Asserts nothing.
 */
import { execFile, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createBotFeature } from "../control/bot/feature.ts";
import { sessionPaths } from "../control/bot/paths.ts";
import { parseConfig } from "../control/config/index.ts";
import { startServer } from "../control/server.ts";
import { createLogger } from "../shared/log/logger.ts";
import { listProcesses, processTree } from "../shared/process/group.ts";
import { TICKS_PER_SECOND, statFields, sumCpuTicks } from "../shared/process/proc-stat.ts";
import type { MediaStats } from "../test/fixture/teams/meetings.ts";
import { holdMediaLock } from "../test/harness/media-lock.ts";
import { burstOnsets, channel, listen, sleep, type Received } from "../test/listen/helpers.ts";
import { startFixtureProcess, type RemoteMeeting } from "./fixture-process.ts";
import { tapLatencyMs } from "../worker/listen/capture.ts";
import { encodedBatch } from "../worker/listen/page-tap/page-script.ts";
import { encodedPathEnabled, pageTapEnabled, pageTapReadsTracks } from "../worker/listen/page-tap/tap.ts";
import { paceMs } from "../worker/listen/sink-pacer.ts";

const execFileAsync = promisify(execFile);
const BURSTS = Number(process.env.BENCH_BURSTS ?? 30);
const CPU_SECONDS = Number(process.env.BENCH_CPU_SECONDS ?? 15);
/** Rounds of the CPU figures (listenerCpu). */
const CPU_ROUNDS = Number(process.env.BENCH_CPU_ROUNDS ?? 3);
/** BENCH_MIC=on|off: only that session (default both); BENCH_CPU=0: latency only. */
const MIC_MODES = process.env.BENCH_MIC === "on" ? ["on"] : process.env.BENCH_MIC === "off" ? ["off"] : ["on", "off"];
const WITH_CPU = process.env.BENCH_CPU !== "0";
/** BENCH_STAGES=1: also parecs on the recording's sink, for the stages before the tap (they pace the sink). */
const STAGES = process.env.BENCH_STAGES === "1";
/** BENCH_TAP=page|sink: which tap the sessions' listeners hear (default: the page without a mic). */
if (process.env.BENCH_TAP) process.env.TOAMAISUTAA_LISTEN_TAP = process.env.BENCH_TAP;
/** BENCH_PACE_MS: the sink's block while the page tap serves (worker/listen/sink-pacer.ts). */
if (process.env.BENCH_PACE_MS) process.env.TOAMAISUTAA_LISTEN_PACE_MSEC = process.env.BENCH_PACE_MS;
// The page tap's piece (worker/listen/page-tap/page-script.ts).
if (process.env.BENCH_ENCODED_BATCH) process.env.TOAMAISUTAA_LISTEN_ENCODED_BATCH = process.env.BENCH_ENCODED_BATCH;
if (process.env.BENCH_ENCODED) process.env.TOAMAISUTAA_LISTEN_ENCODED = process.env.BENCH_ENCODED;
if (process.env.BENCH_SEND_MS) process.env.TOAMAISUTAA_LISTEN_SEND_MSEC = process.env.BENCH_SEND_MS;
// The control plane's spreading of the worker's bursts (control/bot/listen/spreader.ts).
if (process.env.BENCH_SPREAD_FRAMES) process.env.TOAMAISUTAA_LISTEN_SPREAD_FRAMES = process.env.BENCH_SPREAD_FRAMES;
/** BENCH_SOURCE=page|server: only that source of the bursts (default both). */
const SOURCES: Source[] = process.env.BENCH_SOURCE === "page" ? ["page"] : process.env.BENCH_SOURCE === "server" ? ["server"] : ["page", "server"];
/**
 * BENCH_CPU_SOURCE=page|server: whose session the CPU figures come from (default server: frames
 * arrive one every 20 ms, as a Teams media server sends them; the page's come in its output's
 * 200 ms blocks, and its browser also encodes and sends them, a larger and noisier baseline).
 */
const CPU_SOURCE: Source = process.env.BENCH_CPU_SOURCE === "page" ? "page" : "server";
if (WITH_CPU && !SOURCES.includes(CPU_SOURCE)) SOURCES.push(CPU_SOURCE);
/** BENCH_LOW_LATENCY=1: the service's LISTEN_LOW_LATENCY (the sink paced while nobody listens too). */
const LOW_LATENCY = process.env.BENCH_LOW_LATENCY === "1";
/** BENCH_SETTLE_MS: how long the bot is in the call before anyone listens (default 0: at once). */
const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS ?? 0);
const ON_MS = 300;
/** How early a burst of the page may be heard (see latency()). */
const EARLY_MS = 250;
/**
 * Not a multiple of 20 ms: the onsets fall at every point of a frame and of a message of the
 * page's (page-script.ts ENCODED_BATCH), so the figures hold the wait for a message to fill as it
 * comes, not one phase of it.
 */
const OFF_MS = 707;

if (process.env.BENCH_TAP_MS) process.env.TOAMAISUTAA_LISTEN_TAP_MSEC = process.env.BENCH_TAP_MS;
/** BENCH_NETEQ_FORGET_PERMILLE: the jitter buffer's forget factor without a mic (worker/browser/field-trials.ts; WebRTC's own: 983). */
if (process.env.BENCH_NETEQ_FORGET_PERMILLE) process.env.TOAMAISUTAA_NETEQ_FORGET_PERMILLE = process.env.BENCH_NETEQ_FORGET_PERMILLE;

// Chromium-heavy suites of this machine take turns (test/harness/media-lock.ts); so does this bench,
// which would otherwise starve their audio and its own figures.
await holdMediaLock();
const dir = mkdtempSync(join(tmpdir(), "bench-listen-"));
// In a process of its own: its media server's RTP is Teams' cost, not the control plane's.
const fixture = await startFixtureProcess();

async function groups(workDir: string): Promise<Record<string, number[]>> {
  const all = await listProcesses();
  const worker = all.filter((p) => p.cmdline.includes(`--session-dir=${workDir}`)).map((p) => p.pid);
  const kids = all.filter((p) => worker.includes(p.ppid));
  // The browser's processes (the page tap works in its renderer, its messages cross the browser).
  const tree = processTree(all, worker);
  return {
    worker,
    ...browserGroups(all.filter((p) => tree.has(p.pid) && p.cmdline.includes("chromium"))),
    tap: kids.filter((p) => p.cmdline.includes("parec")).map((p) => p.pid),
    pulseaudio: kids.filter((p) => p.cmdline.startsWith("pulseaudio")).map((p) => p.pid),
    control_plane: [process.pid],
    consumers: consumerPids,
    fixture: [fixture.pid],
  };
}

/** The browser's processes by kind: where a listener's cost lands in it. */
function browserGroups(procs: { pid: number; cmdline: string }[]): Record<string, number[]> {
  const kind = (c: string) => (c.includes("--type=renderer") ? "browser_renderer" : c.includes("audio.mojom.AudioService") ? "browser_audio" : c.includes("--type=") ? "browser_other" : "browser_main");
  const out: Record<string, number[]> = { browser_main: [], browser_renderer: [], browser_audio: [], browser_other: [] };
  for (const p of procs) out[kind(p.cmdline)]?.push(p.pid);
  return out;
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
  const before = Object.fromEntries(await Promise.all(Object.entries(g).map(async ([k, pids]) => [k, await sumCpuTicks(pids)] as const)));
  const threadsBefore = THREADS ? threadTicks(g) : null;
  const t0 = performance.now();
  await sleep(CPU_SECONDS * 1000);
  const ms = performance.now() - t0;
  const out: Record<string, number> = {};
  let total = 0;
  for (const [k, pids] of Object.entries(g)) {
    const pct = (((await sumCpuTicks(pids)) - (before[k] ?? 0)) / TICKS_PER_SECOND / (ms / 1000)) * 100;
    out[k] = Number(pct.toFixed(2));
    if (!APART.has(k)) total += pct;
  }
  out.total = Number(total.toFixed(2));
  // Apart from the total: the same CPU again, by thread.
  if (threadsBefore) {
    for (const [k, ticks] of threadTicks(g)) out[`thread ${k}`] = Number((((ticks - (threadsBefore.get(k) ?? 0)) / TICKS_PER_SECOND / (ms / 1000)) * 100).toFixed(2));
  }
  return out;
}

/** Counted apart from the service's total: the client's processes and Teams'. */
const APART = new Set(["consumers", "fixture"]);

/**
 * BENCH_THREADS=1: the worker's and the browser's CPU by thread name too (`thread <group>/<name>`,
 * not in the total), to see a listener's part through the noise of the rest of the session.
 */
const THREADS = process.env.BENCH_THREADS === "1";

/** Ticks by `<group>/<thread name>` for the worker's and the browser's processes. */
function threadTicks(g: Record<string, number[]>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [group, pids] of Object.entries(g)) {
    if (group !== "worker" && !group.startsWith("browser")) continue;
    for (const pid of pids) {
      let tids: string[] = [];
      try {
        tids = readdirSync(`/proc/${pid}/task`);
      } catch {
        continue;
      }
      for (const tid of tids) {
        try {
          const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
          const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")).replace(/[0-9]+$/, "");
          const fields = statFields(stat);
          const key = `${group}/${name}`;
          out.set(key, (out.get(key) ?? 0) + Number(fields[11]) + Number(fields[12]));
        } catch {
          // the thread ended
        }
      }
    }
  }
  return out;
}

/** Which tap a session's listeners hear, with its setting (worker/listen/taps.ts). */
const tapUsed = (mic: boolean) =>
  pageTapEnabled(mic)
    ? encodedPathEnabled()
      ? `page, encoded path (${encodedBatch()} frames a message; a track read ${pageTapReadsTracks(mic) ? `paces the sink at ${paceMs()} ms` : "sends listeners to the sink"})`
      : `page (sink paced at ${paceMs()} ms)`
    : `sink, fragment ${tapLatencyMs(mic)} ms`;
const uptime = () => execFileSync("uptime").toString().trim();
const quantile = (xs: number[], q: number) => {
  const v = [...xs].sort((a, b) => a - b);
  return v[Math.min(v.length - 1, Math.floor(q * v.length))];
};
/** `mean ± standard error` of `xs`, to two decimals. */
const meanAndError = (xs: number[]) => {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const variance = xs.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, xs.length - 1);
  return `${mean.toFixed(2)} ± ${Math.sqrt(variance / xs.length).toFixed(2)}`;
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
  meeting: RemoteMeeting;
  /** Epoch ms of every burst's onset in the meeting so far. */
  onsets(): Promise<number[]>;
  stop(): Promise<void>;
}

/** Where the meeting's bursts come from; see the head of this file. */
type Source = "page" | "server";

async function startSession(mic: boolean, source: Source): Promise<Session> {
  // Short: the worker's listen socket lives below, and a unix socket's path has 107 bytes at most.
  const sub = join(dir, `${mic ? "m" : "n"}${source.slice(0, 1)}`);
  const config = parseConfig({
    server: { PORT: 0, HOST: "127.0.0.1", DATABASE_URL: `file:${join(sub, "app.db")}`, LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "warn" },
    LocalLogin: { Enabled: false },
    bot: { RECORDINGS_DIR: join(sub, "recordings"), MEETING_ALLOWED_HOSTS: fixture.hostPort, MIC_PLAYBACK_ENABLED: mic, LISTEN_LOW_LATENCY: LOW_LATENCY },
  });
  const server = await startServer(config, createLogger({ level: process.env.BENCH_LOG_LEVEL ?? "warn" }), { features: [createBotFeature({ storage: { backend: "local" } })] });
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.url}${path}`, { method, headers: body ? { "content-type": "application/json" } : {}, body: body ? JSON.stringify(body) : undefined });
    return (await res.json()) as Record<string, unknown>;
  };
  // The server's speaker: a burst a period for longer than any run, from the admission on.
  const period = (ON_MS + OFF_MS) / 1000;
  const speak = Array.from({ length: 3600 }, (_, i): [number, number] => [1 + i * period, 1 + i * period + ON_MS / 1000]);
  const meeting =
    source === "page"
      ? await fixture.createMeeting({ lobby: false, tone: { frequency: 440, burst: { onMs: ON_MS, offMs: OFF_MS } } })
      : await fixture.createMeeting({ lobby: false, people: [{ name: "Speaker", frequency: 440, speak }] });
  const onsets = async () => {
    if (source === "page") return (await meeting.state()).toneOnsets;
    const log = await fetch(`${fixture.url}/_fixture/meetings/${meeting.id}/people/log`).then(async (r) => (await r.json()) as { log: { speech: { start: number }[] } });
    return log.log.speech.map((t) => t.start);
  };
  const joined = await api("POST", "/join", { meeting_url: meeting.joinUrl, display_name: "Bench Listen" });
  const id = String((joined.session as Record<string, unknown>).session_id);
  for (let i = 0; i < 600 && String((await api("GET", `/status/${id}`)).status) !== "recording"; i++) await sleep(200);
  await meeting.waitForPhase("in_call");
  await sleep(SETTLE_MS);
  const workDir = sessionPaths(join(sub, "recordings"), id, "wav").workDir;
  return {
    api,
    id,
    workDir,
    meeting,
    onsets,
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

const pulseEnv = (workDir: string) => ({ ...process.env, PULSE_SERVER: `unix:${workDir}/run/native`, HOME: `${workDir}/home`, PULSE_COOKIE: `${workDir}/home/pulse-cookie` });

/** Onset arrival times (epoch ms) of a parec reading the recording's source directly. */
function directTap(workDir: string, latencyMs: number): { onsets(): number[]; stop(): void } {
  const child = spawn("parec", ["--raw", "--format=s16le", "--rate=48000", "--channels=1", `--latency-msec=${latencyMs}`, "--device=rec.monitor"], { env: pulseEnv(workDir) });
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

/**
 * PulseAudio's own view of its streams (`pactl list sink-inputs|source-outputs`): per stream,
 * the audio buffered in the stream and in its device, in ms; Chromium's playback streams are the
 * part of the latency in front of the recording's sink.
 */
async function pulseLatencies(workDir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const kind of ["sink-inputs", "source-outputs"]) {
    // Not execFileSync: this process is the control plane too, and must go on relaying meanwhile.
    const { stdout: text } = await execFileAsync("pactl", ["list", kind], { env: pulseEnv(workDir) });
    for (const block of text.split(/\n(?=Sink Input #|Source Output #)/)) {
      const name = /application\.name = "([^"]*)"/.exec(block)?.[1] ?? "?";
      const media = /media\.name = "([^"]*)"/.exec(block)?.[1] ?? "?";
      const buffer = Number(/Buffer Latency: (\d+) usec/.exec(block)?.[1] ?? Number.NaN) / 1000;
      const device = Number(/(?:Sink|Source) Latency: (\d+) usec/.exec(block)?.[1] ?? Number.NaN) / 1000;
      const index = /^(?:Sink Input|Source Output) #(\d+)/m.exec(block)?.[1] ?? "?";
      if (Number.isFinite(buffer)) out[`${kind === "sink-inputs" ? "play" : "rec"} #${index} ${name}/${media}`] = `buffer ${buffer.toFixed(1)} ms + device ${device.toFixed(1)} ms`;
    }
  }
  return out;
}

/**
 * Latency from each burst's onset in the meeting, at each stage, per burst: the recording's sink
 * (parec of this process at 5 ms, and at the tap's 20 ms), a 48 kHz stereo listener (the
 * source's format: no resampling) and the 16 kHz mono one (resampled by PulseAudio). The
 * differences, per burst, are each stage's share.
 */
async function latency(s: Session): Promise<Record<string, unknown>> {
  const l16 = await openListener(s, 16_000, 1);
  const l48 = await openListener(s, 48_000, 2);
  // Their short fragments make the sink render in short blocks: they change what they measure.
  const direct5 = STAGES ? directTap(s.workDir, 5) : null;
  const direct20 = STAGES ? directTap(s.workDir, 20) : null;
  const since = Date.now();
  const total = (BURSTS + 2) * (ON_MS + OFF_MS);
  const media0 = (await s.meeting.state()).media;
  await sleep(total / 2);
  const pulse = await pulseLatencies(s.workDir);
  await sleep(total / 2);
  // Frames keep coming while this process works out the onsets below, which holds up its own
  // event loop (the arrivals it stamps late would count as gaps): the window ends here.
  const windowEnd = Date.now();
  const media1 = (await s.meeting.state()).media;
  direct5?.stop();
  direct20?.stop();
  const heardBy = (r: Received, rate: number, channels: number) => {
    const perFrame = (rate * 20) / 1000;
    return burstOnsets(channel(Buffer.concat(r.frames), channels), rate).map((x) => r.arrivals[Math.floor(x / perFrame)] ?? Number.NaN);
  };
  const arrivals = { rec_sink_5ms: direct5?.onsets() ?? [], rec_sink_20ms: direct20?.onsets() ?? [], listener_48k2: heardBy(l48, 48_000, 2), listener_16k1: heardBy(l16, 16_000, 1) };
  const at: Record<keyof typeof arrivals, number[]> = { rec_sink_5ms: [], rec_sink_20ms: [], listener_48k2: [], listener_16k1: [] };
  const shares: Record<string, number[]> = { tap_fragment_20ms: [], framing_ipc_pacer_ws: [], resampling: [] };
  let missed = 0;
  for (const onset of (await s.onsets()).filter((o) => o >= since + 200 && o < Date.now() - 1500)) {
    // A page's burst can be heard before its onset: the page's clock says when its audio context
    // renders it, but the context renders ahead in its output's blocks, and the encoded path takes
    // the frames on the WebRTC side, before any output. Such a burst counts as early (negative),
    // not as late for the burst after.
    const find = (xs: number[]) => xs.find((a) => a >= onset - EARLY_MS && a < onset - EARLY_MS + ON_MS + OFF_MS);
    const got = Object.fromEntries(Object.entries(arrivals).map(([k, xs]) => [k, find(xs)])) as Record<keyof typeof arrivals, number | undefined>;
    for (const [k, v] of Object.entries(got)) if (v !== undefined) at[k as keyof typeof arrivals].push(v - onset);
    if (got.listener_16k1 === undefined) missed++;
    const share = (name: string, a: number | undefined, b: number | undefined) => a !== undefined && b !== undefined && shares[name]?.push(a - b);
    share("tap_fragment_20ms", got.rec_sink_20ms, got.rec_sink_5ms);
    share("framing_ipc_pacer_ws", got.listener_48k2, got.rec_sink_20ms);
    share("resampling", got.listener_16k1, got.listener_48k2);
  }
  // A token holds one of the session's 4 listener slots until it is revoked.
  for (const r of [l16, l48]) {
    await s.api("DELETE", `/audio/${s.id}/listen/${r.token}`);
    await r.closed;
  }
  return {
    to_listener: { ...stats(at.listener_16k1), missed, each: at.listener_16k1.map((x) => Math.round(x)) },
    // How evenly frames arrive: the encoded path sends ENCODED_BATCH frames a message.
    arrival_gaps_ms: arrivalGaps(l16.arrivals.filter((t) => t < windowEnd)),
    stages_from_onset: Object.fromEntries(Object.entries(at).map(([k, xs]) => [k, stats(xs)])),
    stage_shares_per_burst: Object.fromEntries(Object.entries(shares).map(([k, xs]) => [k, stats(xs)])),
    in_browser: browserDelays(media0, media1),
    pulse,
  };
}

/**
 * The times between frames' arrivals at a listener: median, p99, the longest, and the five
 * longest with when each ended (ms after the first frame), to tell a start-up stall from a hiccup.
 */
function arrivalGaps(arrivals: number[]): Record<string, unknown> {
  const gaps = arrivals.slice(1).map((t, i) => t - (arrivals[i] ?? t));
  const longest = gaps
    .map((gap, i) => ({ gap: Number(gap.toFixed(1)), at: Math.round((arrivals[i + 1] ?? 0) - (arrivals[0] ?? 0)) }))
    .sort((a, b) => b.gap - a.gap)
    .slice(0, 5);
  return { median: Number(quantile(gaps, 0.5)?.toFixed(1)), p99: Number(quantile(gaps, 0.99)?.toFixed(1)), max: Number(Math.max(...gaps).toFixed(1)), longest };
}

/**
 * The bot's browser's view over the window (its getStats(), reported by the fixture page every
 * second): mean time in the WebRTC jitter buffer (and its target), and from there to the audio
 * device's output, which includes Chromium's PulseAudio buffer.
 */
function browserDelays(a: MediaStats | null, b: MediaStats | null): Record<string, number | null> {
  const mean = (sum: keyof MediaStats, count: keyof MediaStats) => {
    const n = Number(b?.[count] ?? 0) - Number(a?.[count] ?? 0);
    return n > 0 ? Number((((Number(b?.[sum] ?? 0) - Number(a?.[sum] ?? 0)) / n) * 1000).toFixed(1)) : null;
  };
  return {
    jitter_buffer_ms: mean("audioJitterBufferDelay", "audioJitterBufferEmitted"),
    jitter_buffer_target_ms: mean("audioJitterBufferTargetDelay", "audioJitterBufferEmitted"),
    playout_to_device_ms: mean("audioPlayoutDelay", "audioPlayoutSamples"),
  };
}

/**
 * CPU with 0, 1 and 4 listeners in session `s` (see the head of this file), after one listener
 * has come and gone (the relays' compiled code, the consumer's: measured, it would count start-up
 * as a listener's steady cost). In BENCH_CPU_ROUNDS rounds, each measuring every case between two
 * windows with no listener: what a case adds is its window minus their mean, so the machine's
 * drift over minutes (a shared box) cancels; each figure is the median over the rounds.
 */
async function listenerCpu(s: Session): Promise<Record<string, unknown>> {
  await sleep(1500);
  const slot = async (formats: [number, number][]) => {
    const opened = [];
    for (const [sample_rate, channels] of formats) opened.push(await s.api("POST", `/audio/${s.id}/listen`, { sample_rate, channels, events: false }));
    const stop = await consumers(opened.map((o) => String(o.listen_url)));
    const figures = await cpu(s.workDir);
    await stop();
    for (const o of opened) await s.api("DELETE", `/audio/${s.id}/listen/${String(o.token)}`);
    await sleep(1_500);
    return figures;
  };
  const cases: Record<string, [number, number][]> = {
    one_16k_mono: [[16_000, 1]],
    four_16k_mono: [[16_000, 1], [16_000, 1], [16_000, 1], [16_000, 1]],
    four_mixed_8k1_16k1_24k1_48k2: [[8000, 1], [16_000, 1], [24_000, 1], [48_000, 2]],
  };
  // BENCH_CPU_CASES=one: the first listener only (quicker A/B rounds); =mixed: the four formats only.
  const only = { one: "one_16k_mono", mixed: "four_mixed_8k1_16k1_24k1_48k2" }[process.env.BENCH_CPU_CASES ?? ""];
  if (only) for (const k of Object.keys(cases)) if (k !== only) delete cases[k];
  await slot([[16_000, 1]]);
  const added: Record<string, Record<string, number>[]> = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  // Each case's window is set against the mean of the windows without listeners on either side of
  // it: the machine's drift over the minute (a shared box) cancels to first order.
  let before = await cpu(s.workDir);
  const idle: Record<string, number>[] = [before];
  for (let r = 0; r < CPU_ROUNDS; r++) {
    for (const [name, formats] of Object.entries(cases)) {
      const withIt = await slot(formats);
      const after = await cpu(s.workDir);
      idle.push(after);
      added[name]!.push(Object.fromEntries(Object.keys(withIt).map((k) => [k, (withIt[k] ?? 0) - ((before[k] ?? 0) + (after[k] ?? 0)) / 2])));
      before = after;
    }
  }
  const medianOf = (rows: Record<string, number>[]) =>
    Object.fromEntries(Object.keys(rows[0] ?? {}).map((k) => [k, Number((quantile(rows.map((r) => r[k] ?? 0), 0.5) ?? 0).toFixed(2))]));
  const addedMedian = Object.fromEntries(Object.entries(added).map(([k, rows]) => [k, medianOf(rows)]));
  const total = (name: string) => addedMedian[name]?.total ?? NaN;
  const round2 = (x: number) => Number(x.toFixed(2));
  return {
    no_listener: medianOf(idle),
    added_by: addedMedian,
    added_total_each_round: Object.fromEntries(Object.entries(added).map(([k, rows]) => [k, rows.map((r) => round2(r.total ?? 0))])),
    // The rounds' mean and its standard error: how far the median above can be trusted.
    added_total_mean: Object.fromEntries(Object.entries(added).map(([k, rows]) => [k, meanAndError(rows.map((r) => r.total ?? 0))])),
    per_listener: { one: total("one_16k_mono"), four_same: round2(total("four_16k_mono") / 4), four_mixed: round2(total("four_mixed_8k1_16k1_24k1_48k2") / 4), target: 1 },
    // The first listener carries what any listener needs (the page's copies, the decoding, the
    // check against the sink): each one after it costs only its own conversion and socket.
    each_after_the_first: { four_same: round2((total("four_16k_mono") - total("one_16k_mono")) / 3), four_mixed: round2((total("four_mixed_8k1_16k1_24k1_48k2") - total("one_16k_mono")) / 3) },
  };
}

try {
  const loadStart = uptime();
  const latencyMic: Record<string, unknown> = {};
  const latencyNoMic: Record<string, unknown> = {};
  const cpuFigures: Record<string, unknown> = {};
  for (const mic of MIC_MODES) {
    const latencies = mic === "on" ? latencyMic : latencyNoMic;
    for (const source of SOURCES) {
      const s = await startSession(mic === "on", source);
      latencies[`from_${source}`] = await latency(s);
      // One source's session, whose bursts keep the tap busy as a meeting would.
      if (WITH_CPU && source === CPU_SOURCE) cpuFigures[`mic_playback_${mic}`] = await listenerCpu(s);
      await s.stop();
    }
  }

  console.log(JSON.stringify({
    latency_ms: { target: { median: 150, p95: 250 }, mic_playback_off: latencyNoMic, mic_playback_on: latencyMic },
    cpu_percent_of_core: WITH_CPU ? cpuFigures : null,
    load: { start: loadStart, end: uptime() },
    // What the workers use (taps.ts): the tap and the sink tap's fragment follow the microphone
    // unless BENCH_TAP and BENCH_TAP_MS say.
    tap: { mic_playback_off: tapUsed(false), mic_playback_on: tapUsed(true) },
    settle_ms: SETTLE_MS,
    cpu_source: WITH_CPU ? CPU_SOURCE : null,
    listen_low_latency: LOW_LATENCY,
  }, null, 2));
} finally {
  await fixture.close();
  rmSync(dir, { recursive: true, force: true });
}
