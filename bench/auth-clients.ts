/**
 * Load clients for bench/auth.ts, run in a worker thread so the load generator does not share
 * the server's event loop (real clients are other processes; on one loop, the client's own HTTP
 * work would be counted as server latency and would cap the server's throughput; a login storm's
 * clients would also take main-thread CPU from the very hashing they measure).
 *
 * `refresh`: each chain rotates its own refresh token in a loop. `periodMs` 0 is a closed loop (as
 * fast as the server answers); above 0 a chain starts one refresh per period (a paced probe whose
 * latency is not inflated by its own queueing). Runs for `seconds`, or until the parent posts "stop".
 * `login`: `clients` closed-loop clients share `count` sign-ins, client c as `identifiers[c % n]`.
 * Posts "ready" once loaded and started, then answers `{latencies, failures}` (ms).
 */
import { Agent, request } from "node:http";
import { parentPort, workerData } from "node:worker_threads";

export interface RefreshClientsInput {
  kind: "refresh";
  refreshUrl: string;
  tokens: string[];
  seconds: number;
  periodMs: number;
}

export interface LoginClientsInput {
  kind: "login";
  loginUrl: string;
  identifiers: string[];
  password: string;
  clients: number;
  count: number;
}

export type ClientsInput = RefreshClientsInput | LoginClientsInput;

export interface ClientsOutput {
  latencies: number[];
  failures: number;
}

const agent = new Agent({ keepAlive: true, maxSockets: 256 });

function post(url: URL, payload: unknown): Promise<{ status: number; refreshToken: string | undefined }> {
  const body = JSON.stringify(payload);
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const json = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as { refresh_token?: string };
        resolve({ status: res.statusCode ?? 0, refreshToken: json.refresh_token });
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function logins(input: LoginClientsInput): Promise<ClientsOutput> {
  const url = new URL(input.loginUrl);
  const latencies: number[] = [];
  let failures = 0;
  let next = 0;
  parentPort?.postMessage("ready");
  await Promise.all(
    Array.from({ length: input.clients }, async (_, c) => {
      const identifier = input.identifiers[c % input.identifiers.length];
      while (next < input.count) {
        next += 1;
        const started = performance.now();
        const r = await post(url, { identifier, password: input.password });
        latencies.push(performance.now() - started);
        if (r.status !== 200) failures += 1;
      }
    }),
  );
  agent.destroy();
  return { latencies, failures };
}

async function refreshes(input: RefreshClientsInput): Promise<ClientsOutput> {
  const url = new URL(input.refreshUrl);
  const latencies: number[] = [];
  let failures = 0;
  let stopped = false;
  parentPort?.on("message", (m) => {
    if (m === "stop") stopped = true;
  });
  const deadline = performance.now() + input.seconds * 1000;
  const done = (): boolean => stopped || performance.now() >= deadline;
  parentPort?.postMessage("ready");
  await Promise.all(
    input.tokens.map(async (first, c) => {
      let token = first;
      // Paced chains start spread over one period, not all at once.
      if (input.periodMs > 0) await sleep((input.periodMs * c) / input.tokens.length);
      while (!done()) {
        const started = performance.now();
        const r = await post(url, { refreshToken: token });
        const took = performance.now() - started;
        latencies.push(took);
        if (r.status !== 200 || !r.refreshToken) {
          failures += 1;
          break;
        }
        token = r.refreshToken;
        if (input.periodMs > took) await sleep(input.periodMs - took);
      }
    }),
  );
  agent.destroy();
  return { latencies, failures };
}

if (parentPort) {
  const input = workerData as ClientsInput;
  const output = input.kind === "login" ? await logins(input) : await refreshes(input);
  parentPort.postMessage(output);
}
