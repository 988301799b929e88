/**
 * A running service as another process (the built server, or the image under buildah): its
 * base URL read from the "listening" log line, every log line kept, and a stop that sends
 * SIGTERM and waits for the exit.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";

export interface ServiceProcess {
  url: string;
  child: ChildProcess;
  lines: string[];
  /** SIGTERM, then the exit code (SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<number | null>;
}

export interface StartOptions {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  /** How long the start may take before the process is killed (default 120 s). */
  timeoutMs?: number;
}

export async function startServiceProcess(options: StartOptions): Promise<ServiceProcess> {
  const child = spawn(options.command, options.args, { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"] });
  const lines: string[] = [];
  const exited = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
  const url = new Promise<string>((resolve, reject) => {
    const read = (line: string): void => {
      lines.push(line);
      if (process.env.TEST_LOG === "1") process.stderr.write(`${line}\n`);
      try {
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === "listening" && entry.url) resolve(entry.url);
      } catch {
        // not a log line (a configuration error is plain text)
      }
    };
    createInterface({ input: child.stdout! }).on("line", read);
    createInterface({ input: child.stderr! }).on("line", read);
    void exited.then(([code]) => reject(new Error(`the service exited (${code}) before listening:\n${lines.join("\n")}`)));
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 120_000);
  try {
    const base = await url;
    return {
      url: base,
      child,
      lines,
      async stop(graceMs = 60_000) {
        if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
        child.kill("SIGTERM");
        const kill = setTimeout(() => child.kill("SIGKILL"), graceMs);
        const [code] = await exited;
        clearTimeout(kill);
        return code;
      },
    };
  } finally {
    clearTimeout(timer);
  }
}
