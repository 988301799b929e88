/**
 * `node --import tsx bench/listen/relay-cost.ts`: what it costs, on this machine, to carry one
 * message every BENCH_EVERY_MS (80) ms through a chain of processes, each woken by the message,
 * reading it and writing it on, as a live listener's audio is carried (the page's carrier, the
 * browser's network service, the worker, the control plane, each one such relay: README "Live
 * audio out"). Nothing is computed on the way, so this is the floor of a relay: the wake-up and
 * the two system calls.
 *
 * A source process (a timer, then a write) and BENCH_RELAYS (3) relays, then a sink that only
 * reads, over unix sockets (BENCH_TRANSPORT=unix) or loopback TCP (`tcp`), BENCH_BYTES (1300)
 * bytes a message (four 20 ms frames of 16 kHz mono PCM is 2560; a page message of four G.711
 * frames ~700). BENCH_ROUNDS (3) windows of BENCH_SECONDS (20) s, and as many of nobody sending
 * between them. Prints JSON: % of one core of each role, a window's CPU less the quiet windows'
 * mean, the median of the rounds and every round; and the ms of CPU a relay spends per message.
 * Asserts nothing.
 */
import { fork, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { cpuTicks, TICKS_PER_SECOND } from "../../shared/process/proc-stat.ts";
import { mean } from "../bot/measure.ts";

const EVERY_MS = Number(process.env.BENCH_EVERY_MS ?? 80);
const RELAYS = Number(process.env.BENCH_RELAYS ?? 3);
const BYTES = Number(process.env.BENCH_BYTES ?? 1300);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const TRANSPORT = process.env.BENCH_TRANSPORT === "tcp" ? "tcp" : "unix";

/** `listen`: a unix socket's path, "tcp" for an ephemeral loopback port, or null (the source). */
type Command = { listen: string | null; forwardTo: string | null } | { send: boolean };

/**
 * A chain member: listens for its upstream (unless it is the source) and answers with where it
 * listens, forwards to its downstream (unless it is the sink).
 */
function member(): void {
  let out: Socket | null = null;
  let timer: NodeJS.Timeout | null = null;
  const payload = Buffer.alloc(BYTES, 1);
  const address = (a: string) => (a.startsWith("/") ? { path: a } : { host: "127.0.0.1", port: Number(a) });
  process.on("message", (c: Command) => {
    if ("send" in c) {
      if (timer) clearInterval(timer);
      timer = c.send ? setInterval(() => out?.write(payload), EVERY_MS) : null;
      return;
    }
    const listen = (then: (at: string | null) => void) => {
      if (!c.listen) return then(null);
      const server: Server = createServer((s) => s.on("data", (chunk: Buffer) => out?.write(chunk)));
      const at = c.listen;
      if (at.startsWith("/")) server.listen(at, () => then(at));
      else server.listen(0, "127.0.0.1", () => then(String((server.address() as AddressInfo).port)));
    };
    listen((at) => {
      if (!c.forwardTo) return void process.send?.(at);
      out = connect(address(c.forwardTo), () => process.send?.(at));
      out.setNoDelay(true);
    });
  });
}

if (process.argv[2] === "member") member();
else await main();

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "relay-cost-"));
  const roles = ["source", ...Array.from({ length: RELAYS }, (_, i) => `relay ${i + 1}`), "sink"];
  const members: ChildProcess[] = roles.map(() => fork(new URL(import.meta.url).pathname, ["member"], { execArgv: process.execArgv }));
  const setUp = (m: ChildProcess, c: Command) =>
    new Promise<string | null>((resolve) => {
      m.once("message", (at: string | null) => resolve(at));
      m.send(c);
    });
  // From the sink back to the source, so that every member's downstream listens when it connects.
  let downstream: string | null = null;
  for (let i = members.length - 1; i >= 0; i--) {
    const listen = i === 0 ? null : TRANSPORT === "unix" ? join(dir, `m${i}.sock`) : "tcp";
    downstream = await setUp(members[i]!, { listen, forwardTo: downstream });
  }

  const window = async (sending: boolean): Promise<number[]> => {
    members[0]!.send({ send: sending } satisfies Command);
    await sleep(1000);
    const before = await Promise.all(members.map(async (m) => (await cpuTicks(m.pid!)) ?? 0));
    const started = performance.now();
    await sleep(SECONDS * 1000);
    const after = await Promise.all(members.map(async (m) => (await cpuTicks(m.pid!)) ?? 0));
    const seconds = (performance.now() - started) / 1000;
    return after.map((a, i) => (((a - before[i]!) / TICKS_PER_SECOND) * 100) / seconds);
  };
  const quiet: number[][] = [await window(false)];
  const busy: number[][] = [];
  for (let r = 0; r < ROUNDS; r++) {
    busy.push(await window(true));
    quiet.push(await window(false));
  }
  for (const m of members) m.kill();
  await rm(dir, { recursive: true, force: true });

  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const idle = roles.map((_, i) => mean(quiet.map((q) => q[i]!)));
  const added = busy.map((b) => b.map((v, i) => v - idle[i]!));
  const round = (x: number) => Math.round(x * 100) / 100;
  const byRole = Object.fromEntries(roles.map((role, i) => [role, { median: round(median(added.map((a) => a[i]!))), rounds: added.map((a) => round(a[i]!)) }]));
  const relayMedians = roles.slice(1, -1).map((_, i) => median(added.map((a) => a[i + 1]!)));
  const perSecond = 1000 / EVERY_MS;
  console.log(
    JSON.stringify(
      {
        transport: TRANSPORT,
        every_ms: EVERY_MS,
        bytes: BYTES,
        percent_of_a_core: byRole,
        a_relay: { percent_of_a_core: round(mean(relayMedians)), cpu_ms_per_message: round((mean(relayMedians) * 10) / perSecond) },
        idle_percent: idle.map(round),
        load: loadavg().map(round),
      },
      null,
      2,
    ),
  );
}
