import { spawn, type ChildProcess, type StdioOptions } from "node:child_process";
import type { Socket } from "node:net";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import type { Logger } from "../log/logger.ts";
import { killProcessGroup, signalProcessGroup } from "./group.ts";
import { within } from "../timeout.ts";

/** How a child ended: exactly one of code / signal is non-null (as node reports it). */
export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface SpawnChildOptions {
  command: string;
  args: readonly string[];
  logger: Logger;
  /** Short name put on every log line (e.g. "ffmpeg"). */
  name: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** "pipe" keeps stdin writable (ffmpeg's "q"); default "ignore". */
  stdin?: "pipe" | "ignore";
  /** Which stderr lines stderrTail() keeps (default all): a chatty child's tail keeps its errors. */
  keepInTail?: (line: string) => boolean;
  /** Called with each stderr line, after it is logged (e.g. to parse ffmpeg banners). */
  onStderrLine?: (line: string) => void;
  onStdoutLine?: (line: string) => void;
  /**
   * The child writes its stdout straight into this socket (a reader in another process), and
   * nothing passes through this one. The caller should close its own handle after the spawn: the
   * child holds a duplicate, and libuv leaves the shared descriptor blocking for the child.
   * "ignore": the child writes to /dev/null; a number: to that file descriptor (the caller closes
   * its own after the spawn).
   */
  stdout?: Socket | "ignore" | number;
  /** Kill the child's group should this process exit first (a child that would outlive it). */
  killOnParentExit?: boolean;
}

export interface StopOptions {
  /** First signal (default SIGTERM); null when the caller already asked it to quit another way
   * (e.g. "q" on ffmpeg's stdin) and only the bounded wait and the SIGKILL remain. */
  signal?: NodeJS.Signals | null;
  /** Send the first signal to the whole group instead of the leader only. */
  group?: boolean;
  /** Wait this long after the first signal before SIGKILLing the group. */
  timeoutMs?: number;
}

export interface Child {
  readonly pid: number;
  readonly process: ChildProcess;
  /** Resolves (never rejects) once the process has exited. */
  readonly exited: Promise<ChildExit>;
  /** Whether `exited` has settled. */
  readonly hasExited: boolean;
  /** The last stderr lines read so far, for error messages. */
  stderrTail(): string[];
  /**
   * The last stderr lines once the child has exited and its stderr has ended: 'exit' may come
   * before the last lines are read. Waits at most STDERR_AFTER_EXIT_MS after the exit (a
   * grandchild may hold stderr open).
   */
  finalStderrTail(): Promise<string[]>;
  stop(options?: StopOptions): Promise<ChildExit>;
}

/** Enough stderr to explain a failure without holding a chatty process's whole log. */
const STDERR_TAIL_LINES = 20;
const DEFAULT_STOP_TIMEOUT_MS = 5_000;
/** How long finalStderrTail() waits for stderr's end after the exit. */
export const STDERR_AFTER_EXIT_MS = 1_000;

/**
 * Spawns a child in its own process group (detached) so that it and everything it starts can be
 * killed together; output is logged line by line with the pid. Modelled on Playwright's
 * processLauncher.ts: graceful signal, bounded wait, then SIGKILL to the group.
 */
export function spawnChild(options: SpawnChildOptions): Child {
  const stdio: StdioOptions = [options.stdin ?? "ignore", options.stdout ?? "pipe", "pipe"];
  const proc = spawn(options.command, [...options.args], {
    detached: true,
    stdio,
    env: options.env ?? process.env,
    cwd: options.cwd,
  });
  // Without a listener a spawn failure ('error' event) would crash the whole worker.
  let spawnError: Error | undefined;
  proc.on("error", (err) => {
    spawnError = err;
  });
  const pid = proc.pid;
  if (pid === undefined) {
    // spawn failures (ENOENT, EACCES) arrive as an 'error' event; a missing pid is the sign.
    throw new Error(`cannot spawn ${options.command}`, { cause: options.args });
  }
  const log = options.logger.child({ child: options.name, child_pid: pid });
  log.debug({ command: options.command, args: options.args }, "child spawned");

  const tail: string[] = [];
  if (options.stdout === undefined) pipeLines(proc.stdout, (line) => {
    log.debug({ stream: "stdout" }, line);
    options.onStdoutLine?.(line);
  });
  pipeLines(proc.stderr, (line) => {
    if (options.keepInTail?.(line) !== false) {
      tail.push(line);
      if (tail.length > STDERR_TAIL_LINES) tail.shift();
    }
    log.debug({ stream: "stderr" }, line);
    options.onStderrLine?.(line);
  });
  const stderrEnded = new Promise<void>((resolve) => {
    if (!proc.stderr) resolve();
    else proc.stderr.once("close", () => resolve());
  });
  // Writing "q" to a process that has just died must not crash the worker with EPIPE.
  proc.stdin?.on("error", (err) => log.debug({ err }, "stdin error"));

  const killOnExit = () => killProcessGroup(pid);
  if (options.killOnParentExit) process.once("exit", killOnExit);
  let done = false;
  const exited = new Promise<ChildExit>((resolve) => {
    proc.on("error", (err) => log.warn({ err, spawnError }, "child process error"));
    proc.once("exit", (code, signal) => {
      done = true;
      process.removeListener("exit", killOnExit);
      log.debug({ code, signal }, "child exited");
      resolve({ code, signal });
    });
  });

  let stopping: Promise<ChildExit> | undefined;
  const stop = (opts: StopOptions = {}): Promise<ChildExit> => {
    stopping ??= (async () => {
      if (done) return exited;
      const signal = opts.signal === undefined ? "SIGTERM" : opts.signal;
      if (signal && opts.group) signalProcessGroup(pid, signal);
      else if (signal) trySignal(proc, signal);
      const timeoutMs = opts.timeoutMs ?? DEFAULT_STOP_TIMEOUT_MS;
      const result = await within(exited, timeoutMs);
      if (result === undefined) {
        log.warn({ timeoutMs, signal }, "child did not stop in time; SIGKILL to its group");
      }
      // Always sweep the group: a leader that exited may have left grandchildren behind.
      killProcessGroup(pid);
      return result ?? exited;
    })();
    return stopping;
  };

  return {
    pid,
    process: proc,
    exited,
    get hasExited() {
      return done;
    },
    stderrTail: () => [...tail],
    finalStderrTail: async () => {
      await exited;
      await within(stderrEnded, STDERR_AFTER_EXIT_MS);
      return [...tail];
    },
    stop,
  };
}

function pipeLines(stream: Readable | null, onLine: (line: string) => void): void {
  if (!stream) return;
  const rl = createInterface({ input: stream, crlfDelay: Infinity });
  rl.on("line", onLine);
}

function trySignal(proc: ChildProcess, signal: NodeJS.Signals): void {
  try {
    proc.kill(signal);
  } catch {
    // Already gone: nothing to signal.
  }
}
