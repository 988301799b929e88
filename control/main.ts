/**
 * `npm start`: the control plane in the foreground. A configuration error prints one line naming
 * the key and exits 78; SIGTERM/SIGINT stop gracefully.
 */
import { ConfigError, loadConfig, type Config } from "./config/index.ts";
import { createLogger } from "../shared/log/logger.ts";
import { startServer } from "./server.ts";

let config: Config;
try {
  config = loadConfig(process.env);
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(ConfigError.EXIT_CODE);
  }
  throw error;
}

/**
 * SIGTERM to exit takes at most SHUTDOWN_GRACE_SECONDS plus this: killed sessions' crash path
 * (15 s), stopping upload retries (5 s), the webhook outbox and the database closing.
 */
const SHUTDOWN_MARGIN_SECONDS = 30;

const logger = createLogger({ level: config.server.LOG_LEVEL });
// A promise nobody awaited that failed is a bug to log, not a reason to end every meeting this
// instance records (its workers leave with it). Thrown exceptions still end the process.
process.on("unhandledRejection", (reason) => {
  logger.error({ err: reason }, "unhandled promise rejection: a bug, logged; the service goes on");
});
try {
  const running = await startServer(config, logger);
  logger.info({ url: running.url, database: running.database.provider }, "listening");
  let signals = 0;
  const shutdown = (signal: NodeJS.Signals): void => {
    signals += 1;
    if (signals > 1) {
      logger.warn({ signal }, "second signal: exiting now");
      process.exit(130);
    }
    logger.info({ signal }, "shutting down");
    // In cluster mode the instance first hands its sessions over (#19: they record on while the
    // others take new joins); the documented stop bound counts from then.
    void running.handOver().then(() => {
      // The documented bound (README, TimeoutStopSec): what is not done by then is recovered from
      // its journal and outbox at the next start, so leaving is safe.
      const budgetMs = (config.bot.SHUTDOWN_GRACE_SECONDS + SHUTDOWN_MARGIN_SECONDS) * 1000;
      setTimeout(() => {
        logger.error({ budget_ms: budgetMs }, "shutdown did not finish in time; exiting (the next start recovers the rest)");
        process.exit(1);
      }, budgetMs).unref();
      return running.stop({ graceMs: config.bot.SHUTDOWN_GRACE_SECONDS * 1000 });
    }).then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", shutdown);
  process.on("SIGINT", shutdown);
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(ConfigError.EXIT_CODE);
  }
  logger.fatal({ err: error }, "startup failed");
  process.exit(1);
}
