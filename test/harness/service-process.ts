/**
 * The real service (control/main.ts) as a child process that keeps running: started with `env`
 * (plus PATH, a private recordings folder and mail folder), its stdout JSON lines kept, its URL
 * read from the "listening" line. For tests of what the process does on signals.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { killSessionProcesses } from "../../control/bot/supervisor/orphans.ts";

export interface ServiceProcess {
  url: string;
  child: ChildProcess;
  /** Every stdout line, parsed when it is JSON. */
  lines: Record<string, unknown>[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL if still running; removes the folders. */
  cleanup(): Promise<void>;
}

const START_TIMEOUT_MS = 60_000;

export async function startServiceProcess(env: Record<string, string>): Promise<ServiceProcess> {
  const dir = mkdtempSync(join(tmpdir(), "toa-svc-"));
  const child = spawn(process.execPath, ["--import", "tsx", "control/main.ts"], {
    env: {
      PATH: process.env.PATH ?? "",
      PORT: "0",
      HOST: "127.0.0.1",
      RECORDINGS_DIR: join(dir, "rec"),
      LOG_LEVEL: "info",
      LocalLogin__SigningKey: Buffer.alloc(32, 9).toString("base64"),
      Mail__Transport: "file",
      Mail__File__Directory: join(dir, "mail"),
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: Record<string, unknown>[] = [];
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (c: string) => (stderr += c));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start: ${stderr}`)), START_TIMEOUT_MS);
    createInterface({ input: child.stdout! }).on("line", (line) => {
      let parsed: Record<string, unknown>;
      try {
        parsed = JSON.parse(line) as Record<string, unknown>;
      } catch {
        parsed = { msg: line };
      }
      lines.push(parsed);
      if (parsed.msg === "listening") {
        clearTimeout(timer);
        resolve(String(parsed.url));
      }
    });
    void exited.then((e) => {
      clearTimeout(timer);
      reject(new Error(`service exited before listening (${JSON.stringify(e)}): ${stderr}`));
    });
  });
  return {
    url,
    child,
    lines,
    exited,
    async cleanup() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGKILL");
        await exited;
      }
      // Its workers (and their Chromium, PulseAudio, ffmpeg) outlive a SIGKILL by design, and one
      // still ending its session writes into the folder while it goes (CI: rm's ENOTEMPTY).
      await killSessionProcesses(dir);
      rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
    },
  };
}
