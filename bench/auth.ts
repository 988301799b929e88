/**
 * Identity-service benchmark (`make bench-auth`): prints figures, asserts nothing.
 *  - cost of one PBKDF2 hash at the configured parameters (600,000 iterations by default);
 *  - password logins/s under a 64-client storm vs the hash-bound limit
 *    (min(cores, libuv threadpool) / hash time, the hash timed right before and after each storm), and the event-loop delay p99 meanwhile, which
 *    shows whether hashing really stays off the event loop;
 *  - refresh p50/p99 while that storm saturates the CPU: LOGIN_USERS chains, each refreshing once
 *    per PROBE_PERIOD_MS (a paced probe, so its latency is the server's, not its own queueing);
 *  - refreshes/s and p50/p99 latency at 64 concurrent closed-loop clients, after a 2 s warm-up,
 *    once with the Node clients and once with wrk (bench/refresh.lua) when it is installed;
 * each on SQLite and on PostgreSQL (TEST_DATABASE_URL, default 127.0.0.1:5432). Login and refresh
 * clients run in worker threads (bench/auth-clients.ts), not on the server's event loop.
 * Environment: BENCH_SECONDS (refresh phase, default 5), BENCH_LOGINS (default 48: at ~0.15-0.7 s
 * per hash on a small machine, enough for a few seconds of storm and a few hundred probes).
 * The refresh phase runs on a second instance with a cheap hasher: its 64 sessions would
 * otherwise cost 64 real hashes to set up, and refresh does no password hashing at all.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { Worker } from "node:worker_threads";
import type { ClientsInput, ClientsOutput } from "./auth-clients.ts";
import { createPbkdf2Hasher, pbkdf2Settings } from "../control/auth/passwords/pbkdf2.ts";
import { parseConfig } from "../control/config/index.ts";
import { authFeature } from "../control/auth/feature.ts";
import { startServer } from "../control/server.ts";
import { createLogger } from "../shared/log/logger.ts";
import { freshDatabase, providers, type Provider } from "../test/harness/databases.ts";

const CLIENTS = 64;
const WARM_UP_SECONDS = 2;
const REFRESH_SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const LOGINS = Number(process.env.BENCH_LOGINS ?? 48);
/** Accounts the login storm signs in to (each costs one real hash to register); also the probe's chains. */
const LOGIN_USERS = 8;
/** 8 chains x one refresh per 40 ms = 200 refreshes/s offered during the storm. */
const PROBE_PERIOD_MS = 40;
const PASSWORD = "benchmark passphrase 42";

const execFileAsync = promisify(execFile);
const pct = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
const fmt = (n: number, digits = 1): string => n.toFixed(digits);

async function post(url: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/**
 * Runs load clients in a worker thread; `stop()` ends them early. A worker does not inherit
 * the tsx loader, so its entry registers tsx and then imports the TypeScript module.
 */
function startClients(input: ClientsInput): { ready: Promise<void>; result: Promise<ClientsOutput>; stop(): void } {
  const entry = `import { register } from ${JSON.stringify(import.meta.resolve("tsx/esm/api"))}; register();
    await import(${JSON.stringify(new URL("./auth-clients.ts", import.meta.url).href)});`;
  const worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(entry)}`), { workerData: input });
  let ready!: () => void;
  const started = new Promise<void>((resolve) => (ready = resolve));
  const result = new Promise<ClientsOutput>((resolve, reject) => {
    worker.on("message", (m: "ready" | ClientsOutput) => {
      if (m === "ready") return ready();
      resolve(m);
      // tsx's loader keeps the worker alive once its work is done.
      void worker.terminate();
    });
    worker.once("error", reject);
    worker.once("exit", (code) => reject(new Error(`${input.kind} clients exited with ${code}`)));
  });
  return { ready: Promise.race([started, result.then(() => undefined)]), result, stop: () => worker.postMessage("stop") };
}

function summary(output: ClientsOutput, seconds: number): string {
  const sorted = [...output.latencies].sort((a, b) => a - b);
  const failed = output.failures > 0 ? `, ${output.failures} FAILED` : "";
  return `${fmt(sorted.length / seconds)}/s; p50 ${fmt(pct(sorted, 50))} ms, p99 ${fmt(pct(sorted, 99))} ms, max ${fmt(sorted.at(-1) ?? Number.NaN)} ms (${sorted.length} refreshes${failed})`;
}

async function hashCost(): Promise<number> {
  const hasher = createPbkdf2Hasher(pbkdf2Settings(parseConfig({ LocalLogin: { SigningKey: Buffer.alloc(32, 1).toString("base64") } } as never)));
  await hasher.hash("warm-up");
  const runs = 5;
  const started = performance.now();
  for (let i = 0; i < runs; i += 1) await hasher.hash(PASSWORD);
  return (performance.now() - started) / runs;
}

async function start(provider: Provider, cheap: boolean) {
  const database = await freshDatabase(provider);
  const config = parseConfig({
    server: { PORT: 0, HOST: "127.0.0.1", DATABASE_URL: database.url, LOG_LEVEL: "warn" },
    LocalLogin: { SigningKey: Buffer.alloc(32, 7).toString("base64"), AllowSelfRegistration: true, RateLimit: { Enabled: false }, LockoutEnabled: false, TokenCleanupInterval: 0 },
  } as never);
  const passwordHasher = cheap ? createPbkdf2Hasher({ iterations: 1000, saltBytes: 16, hashBytes: 32, pepper: { version: 0, secret: undefined }, retired: new Map() }) : undefined;
  const server = await startServer(config, createLogger({ level: "warn" }), {
    host: { hooks: { passwordReset: async () => {} }, ...(passwordHasher ? { passwordHasher } : {}) },
    features: [authFeature],
  });
  return {
    base: `${server.url}/auth`,
    async stop() {
      await server.stop({ graceMs: 2000 });
      await database.drop();
    },
  };
}

/** Registers `count` accounts `bench<from>`, `bench<from + 1>`, …; answers their refresh tokens. */
async function register(base: string, count: number, from = 0): Promise<string[]> {
  const tokens: string[] = [];
  for (let i = from; i < from + count; i += 1) {
    const r = await post(`${base}/register`, { userName: `bench${i}`, email: `bench${i}@example.com`, password: PASSWORD });
    if (r.status !== 201) throw new Error(`register failed: ${r.status}`);
    tokens.push(r.json.refresh_token as string);
  }
  return tokens;
}

/** CLIENTS login clients (in a worker) share LOGINS sign-ins; answers logins/s and the event-loop delay meanwhile. */
async function storm(base: string): Promise<{ seconds: number; rate: number; loop: string }> {
  const identifiers = Array.from({ length: LOGIN_USERS }, (_, i) => `bench${i}`);
  const clients = startClients({ kind: "login", loginUrl: `${base}/login`, identifiers, password: PASSWORD, clients: CLIENTS, count: LOGINS });
  await clients.ready;
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const started = performance.now();
  const output = await clients.result;
  const seconds = (performance.now() - started) / 1000;
  loop.disable();
  if (output.failures > 0) throw new Error(`${output.failures} logins failed`);
  return { seconds, rate: LOGINS / seconds, loop: `event-loop delay p99 ${fmt(loop.percentile(99) / 1e6)} ms, max ${fmt(loop.max / 1e6)} ms` };
}

/**
 * The hash-bound limit of one storm, from hash costs measured right before and right after it:
 * on a shared VM the CPU's speed drifts by tens of percent within a minute, and one measurement
 * at the start made later storms read well above 100% (or below) of a stale limit.
 */
async function bracketed<T>(run: () => Promise<T>): Promise<{ result: T; hashMs: number; range: string }> {
  const before = await hashCost();
  const result = await run();
  const after = await hashCost();
  return { result, hashMs: (before + after) / 2, range: `${fmt(before)}-${fmt(after)} ms` };
}

async function loginStorm(provider: Provider): Promise<void> {
  const { base, stop } = await start(provider, false);
  try {
    const chains = await register(base, LOGIN_USERS);
    const threads = Math.min(availableParallelism(), Number(process.env.UV_THREADPOOL_SIZE ?? 4));
    const share = (rate: number, hashMs: number, range: string): string => {
      const limit = (threads * 1000) / hashMs;
      return `${fmt(rate)}/s = ${fmt((100 * rate) / limit, 0)}% of the hash-bound limit (${fmt(limit)}/s = ${threads} threads / ${fmt(hashMs)} ms, hash ${range} before-after)`;
    };

    const alone = await bracketed(() => storm(base));
    console.log(`${provider}: logins ${share(alone.result.rate, alone.hashMs, alone.range)}; ${alone.result.loop}`);

    // The same storm again, with a paced refresh probe running on the saturated CPU (only during
    // the storm: not while the hash is timed).
    const mixed = await bracketed(async () => {
      const probe = startClients({ kind: "refresh", refreshUrl: `${base}/refresh`, tokens: chains, seconds: 3600, periodMs: PROBE_PERIOD_MS });
      await probe.ready;
      const logins = await storm(base);
      probe.stop();
      return { ...logins, probed: await probe.result };
    });
    const probed = mixed.result.probed;
    console.log(`${provider}: logins with the refresh probe ${share(mixed.result.rate, mixed.hashMs, mixed.range)}; ${mixed.result.loop}`);
    console.log(`${provider}: refresh during the login storm (${LOGIN_USERS} chains, one refresh per ${PROBE_PERIOD_MS} ms each): ${summary(probed, mixed.result.seconds)}`);
  } finally {
    await stop();
  }
}

/**
 * wrk (a C load generator, Debian package `wrk`) in a second process, driving the same 64 chains
 * through bench/refresh.lua: the Node clients' own HTTP work takes part of the 2 cores the server
 * runs on, wrk takes a fraction of that. Undefined when wrk is not installed.
 */
async function wrkRefresh(url: string, tokens: string[], seconds: number): Promise<string | undefined> {
  const dir = mkdtempSync(join(tmpdir(), "bench-refresh-"));
  const file = join(dir, "tokens.txt");
  writeFileSync(file, `${tokens.join("\n")}\n`, { mode: 0o600 });
  try {
    const script = fileURLToPath(new URL("./refresh.lua", import.meta.url));
    const { stdout } = await execFileAsync("wrk", ["-t1", `-c${tokens.length}`, `-d${seconds}s`, "-s", script, url, "--", file]);
    return stdout.trim().split("\n").at(-1);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function refreshLoad(provider: Provider): Promise<void> {
  const { base, stop } = await start(provider, true);
  try {
    const [warm, measured, forWrk] = [await register(base, CLIENTS), await register(base, CLIENTS, CLIENTS), await register(base, CLIENTS, 2 * CLIENTS)];
    // A warm-up first: the first seconds of a fresh process run cold code (JIT) and would set the
    // latency tail.
    const warmUp = startClients({ kind: "refresh", refreshUrl: `${base}/refresh`, tokens: warm, seconds: WARM_UP_SECONDS, periodMs: 0 });
    await warmUp.result;
    // Each client rotates its own chain for REFRESH_SECONDS.
    const clients = startClients({ kind: "refresh", refreshUrl: `${base}/refresh`, tokens: measured, seconds: REFRESH_SECONDS, periodMs: 0 });
    await clients.ready;
    console.log(`${provider}: refresh at ${CLIENTS} clients (Node clients in a worker thread): ${summary(await clients.result, REFRESH_SECONDS)}`);
    const byWrk = await wrkRefresh(`${base}/refresh`, forWrk, REFRESH_SECONDS);
    console.log(`${provider}: refresh at ${CLIENTS} clients (wrk, a second process): ${byWrk ?? "skipped: wrk is not installed (apt-get install wrk)"}`);
  } finally {
    await stop();
  }
}

const hashMs = await hashCost();
console.log(`PBKDF2-HMAC-SHA256, 600,000 iterations: ${fmt(hashMs)} ms per hash (one thread)`);
for (const provider of providers()) {
  await loginStorm(provider);
  await refreshLoad(provider);
}
