/**
 * A feature (health, auth, bot) mounts its routers into the app through this contract, gets the
 * shared dependencies, and hands back what the app needs at readiness checks and shutdown.
 */
import type { Express } from "express";
import type { Config } from "../config/index.ts";
import type { Database } from "../db/client.ts";
import type { OpenApiRegistry } from "../http/openapi.ts";
import type { Logger } from "../../shared/log/logger.ts";
import type { HostHooks } from "./host.ts";

export interface FeatureContext {
  app: Express;
  config: Config;
  logger: Logger;
  database: Database;
  registry: OpenApiRegistry;
  host: HostHooks;
  /** Wall clock, injectable for tests. */
  now: () => Date;
}

export interface MountedFeature {
  /** Returns a problem description when the feature cannot serve, for /readyz. */
  ready?: () => Promise<Record<string, string>>;
  /** Graceful stop: finish or hand over work before the database closes. */
  close?: () => Promise<void>;
}

export interface Feature {
  name: string;
  mount(ctx: FeatureContext): Promise<MountedFeature> | MountedFeature;
}
