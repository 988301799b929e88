/**
 * One forked meeting worker: the IPC channel (every message parsed by zod on arrival), its
 * output logged line by line with the pid, a ping watchdog that treats a silent worker as hung,
 * and the 'exit' event reported at once so the crash path starts without delay.
 */
import { fork, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import type { Logger } from "../../../shared/log/logger.ts";
import { fromWorkerSchema, type FromWorker, type ToWorker } from "../../../shared/ipc/messages.ts";
import type { LaunchGate } from "./launch-gate.ts";
import { relayWorkerLine } from "./worker-log.ts";

/** A worker's event loop answers a ping in milliseconds; 5 s between pings keeps IPC quiet. */
const PING_INTERVAL_MS = 5_000;
/** Three missed pings: Chromium's start can block a worker briefly, never for this long. */
const PONG_TIMEOUT_MS = 15_000;

/**
 * V8 flags of every worker's Node, measured with bench/bot/node-flags-ab.ts (two Node processes
 * each joining the realistic meeting, A and B at once, 2 rounds × 20 s, load 13-26):
 * - `--max-semi-space-size=1` (MB): a worker allocates little at a time (IPC messages, CDP frames,
 *   log lines), yet V8 grows the young generation up to 16 MB per semi-space, committed and
 *   touched. Node PSS 128 → 97 MB (0.76), CPU 3.4 → 2.9 % of a core (0.84). Scavenges get more
 *   frequent and stay sub-millisecond at this size.
 * - `--single-threaded-gc`: no GC helper threads (their stacks and local buffers) for a heap this
 *   small. With the above: 123 → 89 MB (0.72), 3.3 → 2.5 % (0.77).
 */
export const WORKER_NODE_FLAGS: readonly string[] = ["--max-semi-space-size=1", "--single-threaded-gc"];

/**
 * glibc's malloc gives each thread that allocates an arena of its own (up to 8 per core), kept
 * when the thread is done: a worker's V8 compiler and libuv threads left ~20 MB of them per worker.
 * One arena suffices for a process whose allocations are nearly all on its main thread
 * (node-flags-ab.ts with AB_NODE_ENV, 2 and 3 rounds × 20 s, load 0.6-1.3: Node PSS 104 → 95 MB
 * (0.91) both times, CPU 0.4 % of a core either way: B/A 0.98 and 1.02).
 */
export const WORKER_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: "1" };

export interface WorkerProcessOptions {
  modulePath: string;
  /** Node options of the fork (tsx for a TypeScript entry; see worker-bundle.ts). */
  execArgv: string[];
  sessionId: string;
  /** Put on the worker's command line so orphans of a crashed control plane are found in /proc. */
  marker: string;
  logger: Logger;
  /** Turns to start Chromium (launch-gate.ts); without one, every worker's turn is at once. */
  launchGate?: LaunchGate;
  /**
   * Node's compile cache (NODE_COMPILE_CACHE; paths.ts compileCacheDirOf): the worker loads its
   * modules from V8 code an earlier worker made instead of parsing them. Importing Playwright took
   * 270-290 ms of CPU without and 203 ms with it (3 runs each, Node 24, the one-byte copy).
   */
  compileCacheDir?: string;
  onMessage: (message: FromWorker) => void;
  onExit: (exit: { code: number | null; signal: NodeJS.Signals | null }) => void;
  /** The worker stopped answering pings. */
  onHung: () => void;
}

export interface WorkerProcess {
  readonly pid: number;
  send(message: ToWorker): boolean;
  /** SIGKILL to the worker's process group (it is a group leader). */
  kill(): void;
}

export function forkWorker(options: WorkerProcessOptions): WorkerProcess {
  const log = options.logger;
  // detached: the worker leads its own group, so a terminal's Ctrl-C reaches only the control
  // plane (which then stops sessions in order) and a hung worker can be killed as a group.
  const child: ChildProcess = fork(options.modulePath, [`--session-dir=${options.marker}`], {
    execArgv: [...WORKER_NODE_FLAGS, ...options.execArgv],
    stdio: ["ignore", "pipe", "pipe", "ipc"],
    detached: true,
    env: { ...process.env, ...WORKER_ENV, ...(options.compileCacheDir ? { NODE_COMPILE_CACHE: options.compileCacheDir } : {}) },
  });
  const pid = child.pid ?? -1;
  const wlog = log.child({ worker_pid: pid });
  pipeLines(child.stdout, (line) => relayWorkerLine(wlog, line));
  pipeLines(child.stderr, (line) => wlog.warn({ stream: "stderr" }, line));

  // Monotonic: a wall clock stepped forward (NTP, a VM resumed) must not make a worker look hung.
  let lastPong = performance.now();
  let pingId = 0;
  let exited = false;
  const timer = setInterval(() => {
    if (exited) return;
    if (performance.now() - lastPong > PONG_TIMEOUT_MS) {
      wlog.error({ silent_ms: Math.round(performance.now() - lastPong) }, "worker does not answer pings; treating it as hung");
      clearInterval(timer);
      options.onHung();
      return;
    }
    send({ type: "ping", id: ++pingId });
  }, PING_INTERVAL_MS);
  timer.unref();

  child.on("message", (raw: unknown) => {
    const parsed = fromWorkerSchema.safeParse(raw);
    if (!parsed.success) {
      wlog.warn({ issues: parsed.error.issues.slice(0, 3) }, "worker sent a message outside the protocol; ignored");
      return;
    }
    // Any message proves the worker's event loop is alive, not only a pong.
    lastPong = performance.now();
    // The turn to start Chromium is the process's business, whoever owns the worker now (the
    // warm pool or a session): answered here, never passed on.
    if (parsed.data.type === "launchTurn") {
      if (parsed.data.phase === "done") options.launchGate?.done(pid);
      else if (options.launchGate) options.launchGate.want(pid, () => send({ type: "launchGo" }));
      else send({ type: "launchGo" });
      return;
    }
    options.onMessage(parsed.data);
  });
  child.on("error", (err) => wlog.warn({ err }, "worker process error"));
  child.once("exit", (code, signal) => {
    exited = true;
    clearInterval(timer);
    options.launchGate?.done(pid);
    wlog.info({ code, signal }, "worker exited");
    options.onExit({ code, signal });
  });

  function send(message: ToWorker): boolean {
    if (exited || !child.connected) return false;
    try {
      child.send(message, (err) => {
        if (err) wlog.debug({ err, type: message.type }, "IPC send failed");
      });
      return true;
    } catch {
      return false;
    }
  }

  return {
    pid,
    send,
    kill() {
      if (exited) return;
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    },
  };
}

function pipeLines(stream: Readable | null, onLine: (line: string) => void): void {
  if (!stream) return;
  createInterface({ input: stream, crlfDelay: Infinity }).on("line", (line) => {
    if (line.trim() !== "") onLine(line);
  });
}
