/** What every bot route module receives (conventions.md 1: a factory gets its dependencies). */
import type { Config } from "../config/index.ts";
import type { MountedRouter } from "../http/route.ts";
import type { UpgradeRoutes } from "../http/upgrades.ts";
import type { RequestHandler } from "express";
import type { Cluster } from "../cluster/cluster.ts";
import type { SessionRepo } from "./session-repo.ts";
import type { Supervisor } from "./supervisor/supervisor.ts";

export interface BotRouteDeps {
  target: MountedRouter;
  config: Config;
  repo: SessionRepo;
  supervisor: Supervisor;
  /** BOT_ACCESS_TOKEN guard; a no-op when the token is unset. */
  auth: RequestHandler;
  now: () => Date;
  /** Cluster mode (#19): placement and cluster-wide counts; absent on a single instance. */
  cluster?: Cluster;
  /** WebSocket upgrades (live listening); absent in apps built without them. */
  upgrades?: UpgradeRoutes;
}
