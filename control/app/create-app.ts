/**
 * The app factory: configuration and dependencies in, an Express 5 app with every feature
 * mounted out. Nothing here reads process.env or opens ports, so tests and host programs build
 * as many independent instances as they like.
 */
import express, { type Express, type Router } from "express";
import type { Config } from "../config/index.ts";
import type { Database } from "../db/client.ts";
import { AppError } from "../http/errors.ts";
import { errorMiddleware } from "../http/error-middleware.ts";
import { methodNotAllowed } from "../http/method-not-allowed.ts";
import { requestLogging } from "../http/request-logging.ts";
import { OpenApiRegistry } from "../http/openapi.ts";
import type { Logger } from "../../shared/log/logger.ts";
import { FEATURES } from "./features.ts";
import type { Feature, MountedFeature } from "./feature.ts";
import type { HostHooks } from "./host.ts";
import { docsFeature } from "./docs.ts";
import { healthFeature, mountReadiness } from "./health.ts";

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
  /** Problems keyed by component; empty when ready. */
  readiness(): Promise<Record<string, string>>;
  close(): Promise<void>;
}

export async function createApp(deps: AppDependencies): Promise<AppInstance> {
  const { config, logger, database } = deps;
  const app = express();
  const registry = new OpenApiRegistry();
  app.disable("x-powered-by");
  app.set("trust proxy", trustProxy(config));
  app.set("query parser", "simple");
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
  const ctx = { app, config, logger, database, registry, host, now: deps.now ?? (() => new Date()) };
  const mounted: MountedFeature[] = [];
  try {
    for (const feature of [healthFeature, ...(deps.features ?? FEATURES), docsFeature]) {
      mounted.push(await feature.mount(ctx));
    }
  } catch (error) {
    await Promise.allSettled(mounted.map((m) => m.close?.()));
    throw error;
  }

  const readiness = async (): Promise<Record<string, string>> => {
    const problems: Record<string, string> = {};
    try {
      await database.ping();
    } catch (error) {
      problems.database = (error as Error).message;
    }
    for (const m of mounted) Object.assign(problems, await m.ready?.().catch((e: Error) => ({ feature: e.message })));
    return problems;
  };
  mountReadiness({ router: app as unknown as Router, prefix: "", registry }, readiness);

  app.use(methodNotAllowed(registry));
  app.use((_req, _res, next) => next(new AppError("not_found")));
  app.use(errorMiddleware(config.LocalLogin.EndpointPrefix));

  return {
    app,
    registry,
    readiness,
    async close() {
      for (const m of [...mounted].reverse()) await m.close?.();
    },
  };
}

/** Express's trust-proxy setting: only the configured proxies' X-Forwarded-For is believed. */
function trustProxy(config: Config): string[] | false {
  const list = [...config.ForwardedHeaders.KnownProxies, ...config.ForwardedHeaders.KnownNetworks];
  return list.length > 0 ? list : false;
}
