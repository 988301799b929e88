/**
 * Starts the whole service on a port: database (migrated), app, HTTP server, and a graceful
 * stop: stop accepting, let features finish (sessions leave their meetings), drain in-flight
 * requests, close the database. Used by main.ts and by the test harness.
 */
import type { AddressInfo } from "node:net";
import { createServer, type Server } from "node:http";
import type { Config } from "./config/index.ts";
import { openDatabase, type Database } from "./db/client.ts";
import { createApp, type AppDependencies, type AppInstance } from "./app/create-app.ts";
import type { Logger } from "../shared/log/logger.ts";

export interface RunningServer {
  url: string;
  port: number;
  server: Server;
  instance: AppInstance;
  database: Database;
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
  const server = createServer(instance.app);
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
    stop(options = {}) {
      stopping ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        await instance.close();
        const grace = setTimeout(() => server.closeAllConnections(), options.graceMs ?? 10_000);
        await closed;
        clearTimeout(grace);
        await database.close();
      })();
      return stopping;
    },
  };
}
