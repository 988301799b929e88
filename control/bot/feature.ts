/**
 * The recorder bot as one feature: recovers what a crashed run left, then mounts its routes at
 * the root and hands the app its readiness check and graceful stop. `createBotFeature` lets
 * tests and host programs choose the worker module and the storage settings.
 */
import { fileURLToPath } from "node:url";
import { Router } from "express";
import type { Feature, MountedFeature } from "../app/feature.ts";
import { createRecordingStore, type RetryOptions, type StorageConfig } from "../storage/index.ts";
import { requireBotToken } from "./auth.ts";
import type { BotRouteDeps } from "./context.ts";
import { createNotifier } from "./notifier.ts";
import { webhookDirOf } from "./paths.ts";
import { botProblems } from "./readiness.ts";
import { recoverSessions } from "./recovery.ts";
import { audioRoutes } from "./routes/audio.ts";
import { joinRoute } from "./routes/join.ts";
import { rootRoute } from "./routes/root.ts";
import { sessionRoutes } from "./routes/sessions.ts";
import { SessionRepo } from "./session-repo.ts";
import { createSupervisor } from "./supervisor/supervisor.ts";

export const DEFAULT_WORKER_MODULE = fileURLToPath(new URL("../../worker/main.ts", import.meta.url));

/** Recovery blocks the start this long at most; slow remote uploads carry on in the background. */
const RECOVERY_WAIT_MS = 30_000;

export interface BotFeatureOptions {
  workerModule?: string;
  /** Storage settings; the configuration's `storage` section (STORAGE_BACKEND & co) when absent. */
  storage?: StorageConfig;
  /** More route modules on the same deps (the audio playback routes of the mic feature). */
  routes?: ((deps: BotRouteDeps) => void)[];
  /** Backoff of recording uploads while the store is down (default 1 s doubling to 60 s). */
  uploadRetry?: Pick<RetryOptions, "minDelayMs" | "maxDelayMs">;
  /** How long the start waits for recovered sessions to be stored (default 30 s); the rest continues in the background. */
  recoveryWaitMs?: number;
}

export function createBotFeature(options: BotFeatureOptions = {}): Feature {
  return {
    name: "bot",
    async mount({ app, config, logger, database, registry, now }): Promise<MountedFeature> {
      const bot = config.bot;
      const log = logger.child({ feature: "bot" });
      if (!bot.BOT_ACCESS_TOKEN) log.warn("BOT_ACCESS_TOKEN is not set: the bot API is open to anyone who can reach it");
      const store = createRecordingStore(options.storage ?? (config.storage as StorageConfig), { recordingsDir: bot.RECORDINGS_DIR, logger });
      const repo = new SessionRepo(database.db);
      const notifier = createNotifier({ url: bot.WEBHOOK_URL, secret: bot.WEBHOOK_SECRET, events: bot.WEBHOOK_EVENTS, dir: webhookDirOf(bot.RECORDINGS_DIR), logger });
      await notifier.start();
      const finalizeDeps = { repo, store, notifier, logger: log, now, retry: options.uploadRetry };

      // Recovered uploads retry until they succeed; at close they stop and the next start resumes them.
      const recoveryAbort = new AbortController();
      const recovery = await recoverSessions({ ...finalizeDeps, signal: recoveryAbort.signal, recordingsDir: bot.RECORDINGS_DIR });
      const recoveryWaitMs = options.recoveryWaitMs ?? RECOVERY_WAIT_MS;
      const settled = await Promise.race([recovery.background.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), recoveryWaitMs).unref())]);
      if (recovery.recovered.length > 0) log.info({ sessions: recovery.recovered, complete: settled }, "recovered sessions of the previous run");

      const supervisor = createSupervisor({
        deps: finalizeDeps,
        maxSessions: bot.MAX_CONCURRENT_SESSIONS,
        settings: {
          workerModule: options.workerModule ?? DEFAULT_WORKER_MODULE,
          recordingsDir: bot.RECORDINGS_DIR,
          init: {
            lobbyWaitMs: bot.MEETING_WAIT_FOR_LOBBY * 60_000,
            maxRecordingMs: bot.MAX_RECORDING_MINUTES * 60_000,
            mic: { enabled: bot.MIC_PLAYBACK_ENABLED, disableNoiseSuppression: bot.DISABLE_NOISE_SUPPRESSION },
            chromiumPath: bot.CHROMIUM_PATH,
            logLevel: config.server.LOG_LEVEL,
          },
        },
      });

      const router = Router();
      const deps: BotRouteDeps = { target: { router, prefix: "", registry }, config, repo, supervisor, auth: requireBotToken(bot.BOT_ACCESS_TOKEN), now };
      rootRoute(deps);
      joinRoute(deps);
      sessionRoutes(deps);
      audioRoutes(deps);
      for (const mount of options.routes ?? []) mount(deps);
      app.use(router);

      return {
        ready: () => botProblems(bot.CHROMIUM_PATH, store),
        async close() {
          await supervisor.shutdown(bot.SHUTDOWN_GRACE_SECONDS * 1000);
          recoveryAbort.abort();
          await Promise.race([recovery.background, new Promise((r) => setTimeout(r, 5_000).unref())]);
          await notifier.close();
        },
      };
    },
  };
}

export const botFeature: Feature = createBotFeature();
