/**
 * `node --import tsx bench/listen/carrier-ab.ts`: what a page's WebSocket messages cost the bot's
 * browser and the Node process that drives it (Playwright), by who holds the socket: a dedicated
 * Worker (`worker`: DevTools reports each message sent to Playwright, Network.webSocketFrameSent
 * with the payload in base64) or a SharedWorker the Worker hands its messages to over a
 * MessagePort (`carrier`: Playwright does not attach to shared workers), as the page tap's encoded
 * path does (worker/listen/page-tap/encoded-script.ts). The bot's own browser (launchBrowser, its
 * flags and PulseAudio), one page sending BENCH_BYTES (330) bytes every BENCH_EVERY_MS (40) ms to a
 * WebSocket server in this process; BENCH_ROUNDS (3) rounds of BENCH_SECONDS (20) s per mode,
 * alternating. BENCH_MODES (`worker,carrier`) may add `quiet`: the carrier's page whose Worker
 * wakes as often and sends nothing, so that `carrier` less `quiet` is what carrying the messages
 * out of the page costs the browser (the page tap's transform is awake for every frame anyway).
 * Prints JSON: % of one core, of the browser's processes (all, and by kind: its main process,
 * renderers...) and of this process (which also reads the messages, the same in both sending
 * modes), medians and every round. Asserts nothing.
 */
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WebSocketServer } from "ws";
import { createLogger } from "../../shared/log/logger.ts";
import { listProcesses, processTree } from "../../shared/process/group.ts";
import { TICKS_PER_SECOND, sumCpuTicks } from "../../shared/process/proc-stat.ts";
import { startPulse } from "../../worker/audio/pulse.ts";
import { launchBrowser } from "../../worker/browser/launch.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const BYTES = Number(process.env.BENCH_BYTES ?? 330);
const EVERY_MS = Number(process.env.BENCH_EVERY_MS ?? 40);
/** `quiet`: the carrier's page whose Worker wakes as often but sends nothing (what sending adds, without the Worker's own timer). */
type Mode = "worker" | "carrier" | "quiet";
const MODES = (process.env.BENCH_MODES ?? "worker,carrier").split(",").filter((m): m is Mode => m === "worker" || m === "carrier" || m === "quiet");

/** The page: a Worker sending on its own WebSocket, or through a SharedWorker's. */
const page = (mode: Mode, wsUrl: string): string => {
  const send = `const b = new Uint8Array(${BYTES});`;
  const worker =
    mode === "worker"
      ? `const ws = new WebSocket(${JSON.stringify(wsUrl)}); ws.onopen = () => setInterval(() => { ${send} ws.send(b); }, ${EVERY_MS});`
      : mode === "carrier"
        ? `onmessage = (m) => { const port = m.data; setInterval(() => { ${send} port.postMessage(b.buffer, [b.buffer]); }, ${EVERY_MS}); };`
        : `onmessage = () => { setInterval(() => { ${send} }, ${EVERY_MS}); };`;
  const carrier = `onconnect = (e) => { const port = e.ports[0]; const ws = new WebSocket(${JSON.stringify(wsUrl)}); port.onmessage = (m) => { if (ws.readyState === 1) ws.send(m.data); }; };`;
  const blob = (src: string) => `URL.createObjectURL(new Blob([${JSON.stringify(src)}], { type: "text/javascript" }))`;
  return `<!doctype html><script>
    const w = new Worker(${blob(worker)});
    ${mode !== "worker" ? `const s = new SharedWorker(${blob(carrier)}); w.postMessage(s.port, [s.port]);` : ""}
  </script>`;
};

/** This process's descendants (the browser's), each with its kind: its --type, or "browser" for the main one. */
async function browserProcesses(): Promise<Map<string, number[]>> {
  const all = await listProcesses();
  const tree = processTree(all, [process.pid]);
  const kinds = new Map<string, number[]>();
  for (const p of all) {
    if (p.pid === process.pid || !tree.has(p.pid) || !p.cmdline.includes("chrom")) continue;
    const kind = /--type=([\w-]+)/.exec(p.cmdline)?.[1] ?? "browser";
    kinds.set(kind, [...(kinds.get(kind) ?? []), p.pid]);
  }
  return kinds;
}

const logger = createLogger({ level: "silent" });
const dir = await mkdtemp(join(tmpdir(), "carrier-ab-"));
const pulse = await startPulse({ dir, logger, mic: false });
const browser = await launchBrowser({ dir, pulseEnv: pulse.env, logger, mic: false });
let mode: Mode = "worker";
let received = 0;
const server = createServer((_req, res) => {
  res.setHeader("content-type", "text/html");
  res.end(page(mode, `ws://127.0.0.1:${(server.address() as AddressInfo).port}/x`));
});
new WebSocketServer({ server, perMessageDeflate: false }).on("connection", (ws) => ws.on("message", () => received++));
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;

type Round = { browser: number; node: number; messages: number; [kind: string]: number };
const rounds = new Map<Mode, Round[]>(MODES.map((m) => [m, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const m of MODES) {
    mode = m;
    const tab = await browser.page.context().newPage();
    await tab.goto(url);
    await new Promise((r) => setTimeout(r, 2_000));
    const kinds = await browserProcesses();
    const before = new Map(await Promise.all([...kinds].map(async ([k, pids]) => [k, await sumCpuTicks(pids)] as const)));
    const [n0, r0] = [process.cpuUsage(), received];
    await new Promise((r) => setTimeout(r, SECONDS * 1_000));
    const n1 = process.cpuUsage(n0);
    const pct = (v: number) => Math.round(v * 100) / 100;
    const byKind: Record<string, number> = {};
    for (const [k, pids] of kinds) byKind[`${k}×${pids.length}`] = pct((((await sumCpuTicks(pids)) - before.get(k)!) / TICKS_PER_SECOND / SECONDS) * 100);
    const all = pct(Object.values(byKind).reduce((a, b) => a + b, 0));
    rounds.get(m)!.push({ browser: all, node: pct((n1.user + n1.system) / 1e4 / SECONDS), messages: received - r0, ...byKind });
    await tab.close();
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const summary = Object.fromEntries(
  [...rounds].map(([m, rs]) => [m, { browser: median(rs.map((r) => r.browser)), node: median(rs.map((r) => r.node)), rounds: rs }]),
);
console.log(JSON.stringify({ percent_of_core: summary, seconds: SECONDS, every_ms: EVERY_MS, bytes: BYTES, load: readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ") }, null, 2));
server.closeAllConnections();
server.close();
await browser.close();
await pulse.stop();
await rm(dir, { recursive: true, force: true });
