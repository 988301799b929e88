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

const logger = createLogger({ level: config.server.LOG_LEVEL });
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
    running.stop({ graceMs: config.bot.SHUTDOWN_GRACE_SECONDS * 1000 }).then(
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
