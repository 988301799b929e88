/**
 * Starts the real server on port 0 against a fresh database and speaks HTTP to it
 * (conventions.md 8). Config is built fresh per instance from overrides; never mutated.
 */
import { parseConfig, type Config } from "../../control/config/index.ts";
import type { RawTree } from "../../control/config/sources.ts";
import { merge } from "../../control/config/sources.ts";
import { startServer, type RunningServer } from "../../control/server.ts";
import type { AppDependencies } from "../../control/app/create-app.ts";
import { captureLogs, type CapturedLogs } from "./logs.ts";
import { freshDatabase, type Provider } from "./databases.ts";

export const TEST_SIGNING_KEY = Buffer.alloc(32, 7).toString("base64");

export interface TestApp {
  url: string;
  config: Config;
  server: RunningServer;
  logs: CapturedLogs;
  /** JSON request helper; `token` becomes a bearer header. */
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>;
  close(): Promise<void>;
}

export interface RequestOptions {
  body?: unknown;
  token?: string;
  headers?: Record<string, string>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  body: unknown;
  text: string;
}

export interface TestAppOptions extends Omit<AppDependencies, "config" | "logger" | "database"> {
  provider?: Provider;
  /** Nested overrides: `{ LocalLogin: { AllowSelfRegistration: true }, bot: { ... } }`. */
  config?: RawTree;
}

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const { provider = "sqlite", config: overrides = {}, ...extra } = options;
  const database = await freshDatabase(provider);
  const base: RawTree = {
    server: { PORT: 0, HOST: "127.0.0.1", DATABASE_URL: database.url, LOG_LEVEL: "debug" },
    LocalLogin: { SigningKey: TEST_SIGNING_KEY },
  };
  const config = parseConfig(merge(base, overrides));
  const logs = captureLogs();
  let server: RunningServer;
  try {
    server = await startServer(config, logs.logger, extra);
  } catch (error) {
    await database.drop();
    throw error;
  }
  const request = async (method: string, path: string, opts: RequestOptions = {}): Promise<TestResponse> => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.body !== undefined) headers["content-type"] ??= "application/json";
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers,
      body: opts.body === undefined ? undefined : typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body),
    });
    const text = await res.text();
    let body: unknown = undefined;
    try {
      body = text === "" ? undefined : JSON.parse(text);
    } catch {
      body = text;
    }
    return { status: res.status, headers: res.headers, body, text };
  };
  return {
    url: server.url,
    config,
    server,
    logs,
    request,
    async close() {
      await server.stop({ graceMs: 2000 });
      await database.drop();
    },
  };
}
