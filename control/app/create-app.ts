/**
 * The app factory: configuration and dependencies in, an Express 5 app with every feature
 * mounted out. Nothing here reads process.env or opens ports, so tests and host programs build
 * as many independent instances as they like.
 */
import express, { type Express, type Router } from "express";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { Config } from "../config/index.ts";
import type { Database } from "../db/client.ts";
import { AppError } from "../http/errors.ts";
import { errorMiddleware } from "../http/error-middleware.ts";
import { methodNotAllowed } from "../http/method-not-allowed.ts";
import { requestLogging } from "../http/request-logging.ts";
import { OpenApiRegistry } from "../http/openapi.ts";
import { UpgradeRoutes } from "../http/upgrades.ts";
import type { Logger } from "../../shared/log/logger.ts";
import { FEATURES } from "./features.ts";
import type { Feature, MountedFeature } from "./feature.ts";
import type { HostHooks } from "./host.ts";
import { docsFeature } from "./docs.ts";
import { healthFeature, mountReadiness } from "./health.ts";
import { createReadiness, type ReadinessReport } from "./readiness.ts";
import { httpMetrics } from "../metrics/http.ts";
import { metricsFeature } from "../metrics/feature.ts";

export interface AppDependencies {
  config: Config;
  logger: Logger;
  database: Database;
  host?: Partial<HostHooks>;
  now?: () => Date;
  /** Features to mount; defaults to every feature of the product. */
  features?: Feature[];
}

export interface AppInstance {
  app: Express;
  registry: OpenApiRegistry;
  /** Problems keyed by component (and per part); empty when ready. */
  readiness(): Promise<ReadinessReport>;
  /** Handlers of HTTP upgrade requests (WebSocket routes such as live listening). */
  upgrades: UpgradeRoutes;
  /** The server's `upgrade` event: features' hooks first (cluster forwarding), then `upgrades`, else 404. */
  upgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => Promise<void>;
  /** Cluster mode (#19): features hand their work over (stop taking sessions, let running ones end). */
  handOver(): Promise<void>;
  /** Shutdown begins: readiness fails at once, features start their drain (bots leave). */
  drain(): void;
  /**
   * Stops the features, last mounted first. Each one's `drain` starts at once; `close` waits for
   * `requestsDone` (the HTTP requests in flight), so nothing a request still needs is closed.
   */
  close(options?: { requestsDone?: Promise<void> }): Promise<void>;
}

export async function createApp(deps: AppDependencies): Promise<AppInstance> {
  const { config, logger, database } = deps;
  const app = express();
  const registry = new OpenApiRegistry();
  const upgrades = new UpgradeRoutes();
  app.disable("x-powered-by");
  app.set("trust proxy", trustProxy(config));
  app.set("query parser", "simple");
  app.use(httpMetrics());
  app.use(requestLogging(logger));
  app.use(
    express.json({
      limit: "1mb",
      // The audio ingest route streams its body: never buffer it here. A body sent without any
      // Content-Type is read as JSON too, as the service this API comes from (FastAPI) does.
      type: (req) => !/\/ingest\//.test(req.url ?? "") && /json|^$/i.test(String(req.headers["content-type"] ?? "").trim()),
    }),
  );

  const host: HostHooks = { hooks: {}, ...deps.host, ...(deps.host?.hooks ? { hooks: deps.host.hooks } : {}) };
  const ctx = { app, config, logger, database, registry, upgrades, host, now: deps.now ?? (() => new Date()) };
  const named: { name: string; mounted: MountedFeature }[] = [];
  const mounted: MountedFeature[] = [];
  try {
    const builtIn = [healthFeature, metricsFeature, docsFeature];
    for (const feature of [healthFeature, metricsFeature, ...(deps.features ?? FEATURES), docsFeature]) {
      const m = await feature.mount(ctx);
      mounted.push(m);
      // Readiness parts are the product's features; the service's own routes have no dependencies.
      if (!builtIn.includes(feature)) named.push({ name: feature.name, mounted: m });
    }
  } catch (error) {
    await Promise.allSettled(mounted.map((m) => m.close?.()));
    throw error;
  }

  const readiness = createReadiness(database, named);
  mountReadiness({ router: app as unknown as Router, prefix: "", registry }, readiness);
  let draining: Promise<unknown> | undefined;
  const drain = (): Promise<unknown> => {
    readiness.drain();
    draining ??= Promise.allSettled(mounted.map((m) => m.drain?.()));
    return draining;
  };

  app.use(methodNotAllowed(registry));
  app.use((_req, _res, next) => next(new AppError("not_found")));
  app.use(errorMiddleware(config.LocalLogin.EndpointPrefix));

  return {
    app,
    registry,
    readiness: () => readiness.check(),
    upgrades,
    upgrade: (req, socket, head) => upgradeThrough(mounted, upgrades, req, socket, head, logger),
    async handOver() {
      for (const m of mounted) await m.handOver?.();
    },
    drain: () => void drain(),
    async close(options = {}) {
      await Promise.all([drain(), options.requestsDone]);
      for (const m of [...mounted].reverse()) await m.close?.();
    },
  };
}

/** Express's trust-proxy setting: only the configured proxies' X-Forwarded-For is believed. */
function trustProxy(config: Config): string[] | false {
  const list = [...config.ForwardedHeaders.KnownProxies, ...config.ForwardedHeaders.KnownNetworks];
  return list.length > 0 ? list : false;
}

/** Asks each feature in turn; an upgrade nobody takes is answered 404. */
async function upgradeThrough(mounted: MountedFeature[], routes: UpgradeRoutes, req: IncomingMessage, socket: Duplex, head: Buffer, logger: Logger): Promise<void> {
  try {
    for (const m of mounted) if (m.upgrade && (await m.upgrade(req, socket, head))) return;
    // The routes answer 404 for an upgrade none of them takes.
    routes.handle(req, socket, head);
  } catch (err) {
    logger.error({ err }, "upgrade failed");
    socket.destroy();
  }
}
