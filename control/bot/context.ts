/** What every bot route module receives (conventions.md 1: a factory gets its dependencies). */
import type { Config } from "../config/index.ts";
import type { MountedRouter } from "../http/route.ts";
import type { RequestHandler } from "express";
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
}
