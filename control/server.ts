/**
 * Starts the whole service on a port: database (migrated), app, HTTP server, and a graceful
 * stop: readiness fails and the listener closes at once (new connections are refused), bots
 * start leaving their meetings while the requests in flight finish (their responses say
 * `Connection: close`), then the features close, and the database last, once nothing can use it.
 * Used by main.ts and by the test harness.
 */
import { Server, type AddressInfo } from "node:net";
import { createServer, type Server as HttpServer } from "node:http";
import type { Config } from "./config/index.ts";
import { openDatabase, type Database } from "./db/client.ts";
import { createApp, type AppDependencies, type AppInstance } from "./app/create-app.ts";
import type { Logger } from "../shared/log/logger.ts";
import { createRequestDrain, type RequestDrain } from "./http/drain.ts";

/** After SIGTERM, how long idle keep-alive connections stay open for a client's next request. */
const IDLE_WINDOW_MS = 2_000;
/** Idle connections close only once no request has arrived for this long (see RequestDrain.quiet). */
const QUIET_MS = 250;

export interface RunningServer {
  url: string;
  port: number;
  server: HttpServer;
  instance: AppInstance;
  database: Database;
  /** HTTP requests in flight (for a stop's drain and for metrics). */
  requests: RequestDrain;
  /** Cluster mode: stop taking sessions and wait for the running ones, still serving (#19); a no-op otherwise. */
  handOver(): Promise<void>;
  /** `graceMs`: how long requests in flight may take before their connections are cut. */
  stop(options?: { graceMs?: number }): Promise<void>;
}

export async function startServer(
  config: Config,
  logger: Logger,
  extra: Omit<AppDependencies, "config" | "logger" | "database"> = {},
): Promise<RunningServer> {
  const database = await openDatabase(config.server.DATABASE_URL, logger);
  let instance: AppInstance;
  try {
    instance = await createApp({ config, logger, database, ...extra });
  } catch (error) {
    await database.close();
    throw error;
  }
  const requests = createRequestDrain();
  const server = createServer(requests.wrap(instance.app));
  // Upgrades (WebSockets) never reach Express: the app's hooks and routes take them, else 404.
  // Upgraded sockets leave the HTTP server's books: kept here so a stop can end them.
  const upgraded = new Set<{ destroy(): void }>();
  server.on("upgrade", (req, socket, head) => {
    upgraded.add(socket);
    socket.once("close", () => upgraded.delete(socket));
    void instance.upgrade(req, socket, head);
  });
  // Ingest streams and long uploads must not be cut by Node's default 5-minute request timeout.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.server.PORT, config.server.HOST, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = config.server.HOST === "0.0.0.0" || config.server.HOST === "::" ? "127.0.0.1" : config.server.HOST;
  let stopping: Promise<void> | undefined;
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    port,
    server,
    instance,
    database,
    requests,
    handOver: () => instance.handOver(),
    stop(options = {}) {
      stopping ??= (async () => {
        instance.drain();
        requests.start();
        // Stop listening (new connections are refused) but keep idle keep-alive connections:
        // http.Server#close would drop them at once, racing a client that is just sending its
        // next request on one (a reset: a lost request). Their next answer says
        // `Connection: close` instead; the ones still idle are closed once the requests are done.
        const closed = new Promise<void>((resolve) => Server.prototype.close.call(server, () => resolve()));
        const graceMs = options.graceMs ?? 10_000;
        const cut = new Promise<"cut">((resolve) => setTimeout(() => resolve("cut"), graceMs).unref());
        const drained = (async () => {
          // A keep-alive client may be between two requests now: give it the window to send its
          // next one (answered, with `Connection: close`) before idle connections are closed.
          const open = await new Promise<number>((resolve) => server.getConnections((error, count) => resolve(error ? 1 : count)));
          if (open > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(IDLE_WINDOW_MS, graceMs)));
          await requests.quiet(QUIET_MS);
          return "drained" as const;
        })();
        const requestsDone = Promise.race([drained, cut]).then((how) => {
          if (how === "cut") {
            logger.warn({ in_flight: requests.inFlight, grace_ms: graceMs }, "requests still running at the end of the grace period; closing their connections");
            server.closeAllConnections();
          } else server.closeIdleConnections();
        });
        await instance.close({ requestsDone });
        // A client that connected but never sent a request.
        server.closeIdleConnections();
        const lingering = setTimeout(() => {
          server.closeAllConnections();
          for (const socket of upgraded) socket.destroy();
        }, 1_000);
        await closed;
        clearTimeout(lingering);
        await database.close();
      })();
      return stopping;
    },
  };
}
