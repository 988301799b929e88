/**
 * `make bench-cluster`: three instances (separate processes, fake worker) on one fresh PostgreSQL
 * database. Prints placement latency p50/p95 (from /join sent to the session claimed by an
 * instance, and to its worker's `ready`), what forwarding adds to a request (`/status` is answered
 * from the database everywhere; `POST /audio/{id}/stop` is forwarded) and to an ingest stream
 * (the same PUT to the owner and through another instance), and the takeover time after an
 * instance is SIGKILLed. Asserts nothing.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { killSessionProcesses } from "../control/bot/supervisor/orphans.ts";
import { freshDatabase } from "../test/harness/databases.ts";
import { TEST_SIGNING_KEY } from "../test/harness/app.ts";
import { freePort } from "../test/cluster/fixtures/cluster.ts";

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 40);
const MEETING_URL = "https://teams.microsoft.com/meet/123456789?p=abcdef";
type Json = Record<string, unknown>;

interface Instance {
  id: string;
  url: string;
  dir: string;
  proc: ChildProcess;
  /** Log time (epoch ms) of `msg` per session id. */
  seen: Map<string, number>;
}

const root = mkdtempSync(join(tmpdir(), "bench-cluster-"));
const db = await freshDatabase("postgresql");
const instances: Instance[] = [];

async function startInstance(id: string): Promise<Instance> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const dir = join(root, id);
  const proc = spawn(process.execPath, ["--import", "tsx", "bench/cluster-instance.ts"], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      DATABASE_URL: db.url,
      RECORDINGS_DIR: dir,
      INSTANCE_ID: id,
      INSTANCE_URL: url,
      CLUSTER_SECRET: "bench-cluster-secret-0123456789",
      MAX_CONCURRENT_SESSIONS: "4",
      MIC_PLAYBACK_ENABLED: "true",
      LOG_LEVEL: "info",
      LocalLogin__SigningKey: TEST_SIGNING_KEY,
      LocalLogin__Enabled: "false",
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const seen = new Map<string, number>();
  await new Promise<void>((resolveStart, reject) => {
    proc.once("exit", (code) => reject(new Error(`instance ${id} exited ${code}`)));
    createInterface({ input: proc.stdout! }).on("line", (line) => {
      let entry: Json;
      try {
        entry = JSON.parse(line) as Json;
      } catch {
        return;
      }
      if (entry.msg === "listening") resolveStart();
      const sid = typeof entry.session_id === "string" ? entry.session_id : null;
      // pino writes ISO times (shared/log/logger.ts).
      const at = Date.parse(String(entry.time));
      if (sid && entry.msg === "session placed on this instance") seen.set(`placed:${sid}`, at);
      if (sid && entry.msg === "worker ready") seen.set(`ready:${sid}`, at);
    });
  });
  return { id, url, dir, proc, seen };
}

async function api(base: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${base}${path}`, { method, headers: body ? { "content-type": "application/json" } : {}, body: body ? JSON.stringify(body) : undefined });
  return { status: res.status, body: (await res.json().catch(() => ({}))) as Json };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (values: number[], p: number): number => {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};
const fmt = (values: number[]): string => `p50 ${pct(values, 50).toFixed(1)} ms, p95 ${pct(values, 95).toFixed(1)} ms (n=${values.length})`;

async function seenAnywhere(key: string, timeoutMs = 30_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const i of instances) {
      const at = i.seen.get(key);
      if (at !== undefined) return at;
    }
    if (Date.now() > deadline) throw new Error(`never saw ${key}`);
    await sleep(5);
  }
}

async function timed(fn: () => Promise<unknown>, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return out;
}

/** PUTs `bytes` in 64 KB chunks (chunked encoding); resolves with the time until the answer. */
function push(url: string, bytes: number): Promise<number> {
  return new Promise((resolveDone, reject) => {
    const t0 = performance.now();
    const req = request(url, { method: "PUT", headers: { "content-type": "application/octet-stream" } }, (res) => {
      res.resume();
      res.on("end", () => resolveDone(performance.now() - t0));
    });
    req.on("error", reject);
    const chunk = Buffer.alloc(64 * 1024, 1);
    let left = bytes;
    const write = (): void => {
      while (left > 0) {
        left -= chunk.length;
        if (!req.write(chunk)) return void req.once("drain", write);
      }
      req.end();
    };
    write();
  });
}

try {
  for (const id of ["bench-a", "bench-b", "bench-c"]) instances.push(await startInstance(id));
  await sleep(1000);

  // Placement: /join sent → claimed by an instance → worker ready.
  const placed: number[] = [];
  const ready: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const via = instances[i % 3]!;
    const t0 = Date.now();
    const join = await api(via.url, "POST", "/join", { meeting_url: MEETING_URL, reference: `bench-${i}` });
    const id = String((join.body.session as Json).session_id);
    placed.push((await seenAnywhere(`placed:${id}`)) - t0);
    ready.push((await seenAnywhere(`ready:${id}`)) - t0);
    await api(instances[(i + 1) % 3]!.url, "POST", `/stop/${id}`);
  }
  console.log(`placement, /join sent → claimed by an instance: ${fmt(placed)}`);
  console.log(`placement, /join sent → worker ready:           ${fmt(ready)}`);

  // Forwarding overhead on one running session.
  const join = await api(instances[0]!.url, "POST", "/join", { meeting_url: MEETING_URL, reference: "bench-forward" });
  const id = String((join.body.session as Json).session_id);
  let status: Json = {};
  while (status.status !== "recording") status = (await api(instances[0]!.url, "GET", `/status/${id}`)).body;
  const owner = instances.find((i) => i.id === status.instance_id)!;
  const other = instances.find((i) => i !== owner)!;
  const N = 200;
  const statusOwner = await timed(() => api(owner.url, "GET", `/status/${id}`), N);
  const statusOther = await timed(() => api(other.url, "GET", `/status/${id}`), N);
  console.log(`GET /status on the owner:            ${fmt(statusOwner)}`);
  console.log(`GET /status on another instance:     ${fmt(statusOther)} (answered from the database, not forwarded)`);
  const audioOwner = await timed(() => api(owner.url, "POST", `/audio/${id}/stop`), N);
  const audioOther = await timed(() => api(other.url, "POST", `/audio/${id}/stop`), N);
  console.log(`POST /audio/{id}/stop on the owner:  ${fmt(audioOwner)}`);
  console.log(`POST /audio/{id}/stop forwarded:     ${fmt(audioOther)}; added p50 ${(pct(audioOther, 50) - pct(audioOwner, 50)).toFixed(1)} ms`);

  const stream = await api(other.url, "POST", `/audio/${id}/stream`, {});
  const token = String(stream.body.token);
  const path = `/audio/${id}/ingest/${token}`;
  for (const [label, size, runs] of [["64 KB", 64 * 1024, 50], ["16 MB", 16 * 1024 * 1024, 8]] as const) {
    const direct: number[] = [];
    const forwarded: number[] = [];
    for (let r = 0; r < runs; r++) {
      direct.push(await push(`${owner.url}${path}`, size));
      forwarded.push(await push(`${other.url}${path}`, size));
    }
    const added = pct(forwarded, 50) - pct(direct, 50);
    console.log(`ingest PUT of ${label} to the owner:     ${fmt(direct)}`);
    console.log(`ingest PUT of ${label} forwarded:        ${fmt(forwarded)}; added p50 ${added.toFixed(1)} ms`);
  }

  // Takeover: SIGKILL the owner and its workers; another instance marks the session interrupted.
  const killedAt = Date.now();
  owner.proc.kill("SIGKILL");
  await killSessionProcesses(resolve(owner.dir));
  let after: Json = {};
  while (after.status !== "interrupted") {
    after = (await api(other.url, "GET", `/status/${id}`)).body;
    await sleep(100);
  }
  console.log(`takeover after SIGKILL: ${((Date.now() - killedAt) / 1000).toFixed(1)} s (dead after 15 s of silence, sweep every 5 s), end_reason ${String(after.end_reason)}`);
  console.log(`load average: ${loadavg().map((l) => l.toFixed(2)).join(" ")} (${process.env.BENCH_NOTE ?? "2 shared cores"})`);
} finally {
  for (const i of instances) {
    i.proc.kill("SIGKILL");
    await killSessionProcesses(resolve(i.dir));
  }
  await db.drop().catch(() => undefined);
  rmSync(root, { recursive: true, force: true });
}
