/**
 * Identity-service benchmark (`make bench-auth`): prints figures, asserts nothing.
 *  - cost of one PBKDF2 hash at the configured parameters (600,000 iterations by default);
 *  - password logins/s under a 64-client storm vs the hash-bound limit
 *    (min(cores, libuv threadpool) / hash time), and the event-loop delay p99 meanwhile, which
 *    shows whether hashing really stays off the event loop;
 *  - refreshes/s and p50/p99 latency at 64 concurrent clients;
 * each on SQLite and on PostgreSQL (TEST_DATABASE_URL, default 127.0.0.1:5432).
 * Environment: BENCH_SECONDS (refresh phase, default 5), BENCH_LOGINS (default 24: at ~0.3-1.2 s
 * per hash on a small machine, more only lengthens the run, not the figure).
 * The refresh phase runs on a second instance with a cheap hasher: its 64 sessions would
 * otherwise cost 64 real hashes to set up, and refresh does no password hashing at all.
 */
import { availableParallelism } from "node:os";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { createPbkdf2Hasher, pbkdf2Settings } from "../control/auth/passwords/pbkdf2.ts";
import { parseConfig } from "../control/config/index.ts";
import { authFeature } from "../control/auth/feature.ts";
import { startServer } from "../control/server.ts";
import { createLogger } from "../shared/log/logger.ts";
import { freshDatabase, providers, type Provider } from "../test/harness/databases.ts";

const CLIENTS = 64;
const REFRESH_SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const LOGINS = Number(process.env.BENCH_LOGINS ?? 24);
/** Accounts the login storm signs in to (each costs one real hash to register). */
const LOGIN_USERS = 8;
const PASSWORD = "benchmark passphrase 42";

const pct = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
const fmt = (n: number, digits = 1): string => n.toFixed(digits);

async function post(url: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
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

async function register(base: string, count: number): Promise<string[]> {
  const tokens: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const r = await post(`${base}/register`, { userName: `bench${i}`, email: `bench${i}@example.com`, password: PASSWORD });
    if (r.status !== 201) throw new Error(`register failed: ${r.status}`);
    tokens.push(r.json.refresh_token as string);
  }
  return tokens;
}

async function loginStorm(provider: Provider, hashMs: number): Promise<void> {
  const { base, stop } = await start(provider, false);
  try {
    await register(base, LOGIN_USERS);

    // Login storm: CLIENTS workers share LOGINS sign-ins.
    const loop = monitorEventLoopDelay({ resolution: 1 });
    loop.enable();
    let next = 0;
    const loginStarted = performance.now();
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, c) => {
        while (next < LOGINS) {
          next += 1;
          const r = await post(`${base}/login`, { identifier: `bench${c % LOGIN_USERS}`, password: PASSWORD });
          if (r.status !== 200) throw new Error(`login failed: ${r.status}`);
        }
      }),
    );
    const loginSeconds = (performance.now() - loginStarted) / 1000;
    loop.disable();
    const threads = Math.min(availableParallelism(), Number(process.env.UV_THREADPOOL_SIZE ?? 4));
    console.log(
      `${provider}: logins ${fmt(LOGINS / loginSeconds)}/s (hash-bound limit ${fmt((threads * 1000) / hashMs)}/s = ${threads} threads / ${fmt(hashMs)} ms; ` +
        `cores ${availableParallelism()} / hash = ${fmt((availableParallelism() * 1000) / hashMs)}/s); event-loop delay p99 ${fmt(loop.percentile(99) / 1e6)} ms, max ${fmt(loop.max / 1e6)} ms`,
    );
  } finally {
    await stop();
  }
}

async function refreshLoad(provider: Provider): Promise<void> {
  const { base, stop } = await start(provider, true);
  try {
    const refreshTokens = await register(base, CLIENTS);
    // Each client rotates its own chain for REFRESH_SECONDS.
    const latencies: number[] = [];
    const deadline = performance.now() + REFRESH_SECONDS * 1000;
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, c) => {
        let token = refreshTokens[c] ?? "";
        while (performance.now() < deadline) {
          const started = performance.now();
          const r = await post(`${base}/refresh`, { refreshToken: token });
          latencies.push(performance.now() - started);
          if (r.status !== 200) throw new Error(`refresh failed: ${r.status}`);
          token = r.json.refresh_token as string;
        }
      }),
    );
    latencies.sort((a, b) => a - b);
    console.log(`${provider}: refresh ${fmt(latencies.length / REFRESH_SECONDS)}/s at ${CLIENTS} clients; p50 ${fmt(pct(latencies, 50))} ms, p99 ${fmt(pct(latencies, 99))} ms (${latencies.length} refreshes)`);
  } finally {
    await stop();
  }
}

const hashMs = await hashCost();
console.log(`PBKDF2-HMAC-SHA256, 600,000 iterations: ${fmt(hashMs)} ms per hash (one thread)`);
for (const provider of providers()) {
  await loginStorm(provider, hashMs);
  await refreshLoad(provider);
}
