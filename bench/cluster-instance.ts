/**
 * One instance for `make bench-cluster`: the real server from the environment (loadConfig) with
 * the fake worker, so the bench measures placement and forwarding rather than Chromium's start.
 */
import { createBotFeature } from "../control/bot/feature.ts";
import { loadConfig } from "../control/config/index.ts";
import { startServer } from "../control/server.ts";
import { createLogger } from "../shared/log/logger.ts";
import { FAKE_WORKER } from "../test/bot/fixtures/bot-app.ts";

const config = loadConfig(process.env);
const logger = createLogger({ level: config.server.LOG_LEVEL });
const running = await startServer(config, logger, { features: [createBotFeature({ storage: { backend: "local" }, workerModule: FAKE_WORKER })] });
logger.info({ url: running.url }, "listening");
process.on("SIGTERM", () => void running.handOver().then(() => running.stop()).then(() => process.exit(0)));
