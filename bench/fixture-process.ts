/**
 * The Teams fixture in a process of its own (test/fixture/teams/main.ts), driven over its
 * `/_fixture` HTTP API: for benchmarks that count the service's CPU by process, so that what
 * "Teams" costs (its media server's RTP, its pages' feeds) is neither counted as the control
 * plane's nor adds its noise to it.
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { MeetingOptions, MeetingState, Phase } from "../test/fixture/teams/server.ts";

export interface RemoteMeeting {
  id: string;
  joinUrl: string;
  state(): Promise<MeetingState>;
  waitForPhase(phase: Phase, timeoutMs?: number): Promise<MeetingState>;
}

export interface FixtureProcess {
  url: string;
  hostPort: string;
  pid: number;
  createMeeting(options: Partial<MeetingOptions>): Promise<RemoteMeeting>;
  close(): Promise<void>;
}

const MAIN = fileURLToPath(new URL("../test/fixture/teams/main.ts", import.meta.url));

export async function startFixtureProcess(): Promise<FixtureProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", MAIN], { env: { ...process.env, PORT: "0" }, stdio: ["ignore", "pipe", "inherit"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const first = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once("line", resolve);
    child.once("exit", (code) => reject(new Error(`the fixture exited (${code}) before it listened`)));
  });
  const { url, hostPort } = JSON.parse(first) as { url: string; hostPort: string };
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${url}${path}`, { method, headers: body ? { "content-type": "application/json" } : {}, body: body ? JSON.stringify(body) : undefined });
    if (!res.ok) throw new Error(`fixture ${method} ${path}: ${res.status}`);
    return (await res.json()) as T;
  };
  return {
    url,
    hostPort,
    pid: child.pid ?? 0,
    async createMeeting(options) {
      const { id, joinUrl } = await call<{ id: string; joinUrl: string }>("POST", "/_fixture/meetings", options);
      const state = () => call<MeetingState>("GET", `/_fixture/meetings/${id}/state`);
      return {
        id,
        joinUrl,
        state,
        async waitForPhase(phase, timeoutMs = 30_000) {
          const deadline = Date.now() + timeoutMs;
          for (;;) {
            const s = await state();
            if (s.phase === phase) return s;
            if (Date.now() > deadline) throw new Error(`meeting ${id}: phase ${s.phase} after ${timeoutMs} ms, wanted ${phase}`);
            await new Promise((r) => setTimeout(r, 100));
          }
        },
      };
    },
    async close() {
      child.kill("SIGTERM");
      await exited;
    },
  };
}
