/**
 * `runMain(env)`: the real entry point (control/main.ts) as a child process with exactly `env`
 * (plus PATH and a private database and recordings folder), until it exits, for tests of what the
 * process itself does at startup: exit code 78 and the one stderr line that names a bad key.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A process that neither exits nor fails within this long is killed (a start that hangs). */
const TIMEOUT_MS = 60_000;

export function runMain(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const dir = mkdtempSync(join(tmpdir(), "toa-main-"));
    const child = spawn(process.execPath, ["--import", "tsx", "control/main.ts"], {
      env: { PATH: process.env.PATH ?? "", PORT: "0", HOST: "127.0.0.1", DATABASE_URL: `file:${join(dir, "app.db")}`, RECORDINGS_DIR: join(dir, "rec"), LOG_LEVEL: "warn", ...env },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), TIMEOUT_MS);
    child.on("error", reject);
    child.on("exit", (code) => {
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
      resolve({ code, stderr });
    });
  });
}
