/**
 * A feature (health, auth, bot) mounts its routers into the app through this contract, gets the
 * shared dependencies, and hands back what the app needs at readiness checks and shutdown.
 */
import type { Express } from "express";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { Config } from "../config/index.ts";
import type { Database } from "../db/client.ts";
import type { OpenApiRegistry } from "../http/openapi.ts";
import type { UpgradeRoutes } from "../http/upgrades.ts";
import type { Logger } from "../../shared/log/logger.ts";
import type { HostHooks } from "./host.ts";

export interface FeatureContext {
  app: Express;
  config: Config;
  logger: Logger;
  database: Database;
  registry: OpenApiRegistry;
  /** WebSocket upgrades (the server does not route them through Express). */
  upgrades: UpgradeRoutes;
  host: HostHooks;
  /** Wall clock, injectable for tests. */
  now: () => Date;
}

export interface MountedFeature {
  /** Returns a problem description when the feature cannot serve, for /readyz. */
  ready?: () => Promise<Record<string, string>>;
  /**
   * Shutdown has begun (SIGTERM): start what takes long (bots leaving their meetings) while the
   * HTTP requests in flight finish. Called once, before `close`.
   */
  drain?: () => Promise<void>;
  /** Graceful stop: finish or hand over work before the database closes (requests are done). */
  /**
   * Cluster hand-over (#19): stop taking work and let running work end while requests are still
   * served. Awaited before the HTTP server stops; a no-op on a single instance.
   */
  handOver?: () => Promise<void>;
  /**
   * HTTP upgrades (WebSockets), which never reach Express: true when this feature took the
   * socket. Features are asked in mount order; one that rewrote `req.url` may return false.
   */
  upgrade?: (req: IncomingMessage, socket: Duplex, head: Buffer) => Promise<boolean> | boolean;
  close?: () => Promise<void>;
}

export interface Feature {
  name: string;
  mount(ctx: FeatureContext): Promise<MountedFeature> | MountedFeature;
}
