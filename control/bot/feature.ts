/**
 * The recorder bot as one feature: recovers what a crashed run left, then mounts its routes at
 * the root and hands the app its readiness check and graceful stop. `createBotFeature` lets
 * tests and host programs choose the worker module and the storage settings.
 */
import { Router } from "express";
import { entryPath } from "../../shared/runtime/layout.ts";
import type { Feature, MountedFeature } from "../app/feature.ts";
import { createRecordingStore, type RetryOptions, type StorageConfig } from "../storage/index.ts";
import { requireBotToken } from "./auth.ts";
import type { BotRouteDeps } from "./context.ts";
import { startEvidenceRetention } from "./evidence/retention.ts";
import { evidenceRoutes } from "./evidence/routes.ts";
import { createNotifier } from "./notifier.ts";
import { evidenceRootOf, journalDirOf, timelineCacheDirOf, webhookDirOf } from "./paths.ts";
import { ensureJournalDir } from "../../shared/journal/index.ts";
import { createDiskReserve } from "./disk/reserve.ts";
import { diskProblem } from "./disk/space.ts";
import { botProblems } from "./readiness.ts";
import { recoverSessions } from "./recovery.ts";
import { startJournalRetention } from "./journal-retention.ts";
import { listenRoutes } from "./listen/routes.ts";
import { audioRoutes } from "./routes/audio.ts";
import { joinRoute } from "./routes/join.ts";
import { rootRoute } from "./routes/root.ts";
import { sessionRoutes } from "./routes/sessions.ts";
import { timelineRoute } from "./routes/timeline.ts";
import { SessionRepo } from "./session-repo.ts";
import { createSupervisor } from "./supervisor/supervisor.ts";
import { clusterSettings } from "../cluster/settings.ts";
import { within } from "../../shared/timeout.ts";

/** The worker entry: its TypeScript under tsx (bundled on first use, worker-bundle.ts), dist/worker.js when built. */
export const DEFAULT_WORKER_MODULE = entryPath("worker/main.ts", "worker.js");

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
  /** Backoff of a failed final write of a session (default 0.5 s doubling to 30 s). */
  finishRetry?: { minDelayMs?: number; maxDelayMs?: number };
  /** How long a stopped worker may take to leave and close its file before it is killed (default 30 s). */
  stopTimeoutMs?: number;
}

export function createBotFeature(options: BotFeatureOptions = {}): Feature {
  return {
    name: "bot",
    async mount({ app, config, logger, database, registry, upgrades, now }): Promise<MountedFeature> {
      const bot = config.bot;
      const log = logger.child({ feature: "bot" });
      if (!bot.BOT_ACCESS_TOKEN) log.warn("BOT_ACCESS_TOKEN is not set: the bot API is open to anyone who can reach it");
      const store = createRecordingStore(options.storage ?? (config.storage as StorageConfig), { recordingsDir: bot.RECORDINGS_DIR, logger });
      const repo = new SessionRepo(database.db);
      const clustered = clusterSettings(config);
      const notifier = createNotifier({ url: bot.WEBHOOK_URL, secret: bot.WEBHOOK_SECRET, events: bot.WEBHOOK_EVENTS, dir: webhookDirOf(bot.RECORDINGS_DIR), logger, instanceId: clustered?.instanceId });
      await notifier.start();
      await ensureJournalDir(journalDirOf(bot.RECORDINGS_DIR));
      const diskReserve = createDiskReserve(bot.RECORDINGS_DIR, log);
      // Written before recovery: a previous run may have released it on a full disk.
      await diskReserve.ensure();
      // Cluster mode (#19): this instance's row and heartbeat come first, so no other instance takes
      // its sessions over while it recovers its own journals.
      // Loaded only then: a single instance never loads pg-boss.
      const cluster = clustered ? await (await import("../cluster/cluster.ts")).startCluster({ settings: clustered, database, repo, notifier, logger: log }) : undefined;
      const finalizeDeps = { repo, store, notifier, logger: log, now, retry: options.uploadRetry, finishRetry: options.finishRetry, diskReserve, timelineCacheDir: timelineCacheDirOf(bot.RECORDINGS_DIR) };

      // Recovered uploads retry until they succeed; at close they stop and the next start resumes them.
      const recoveryAbort = new AbortController();
      const recovery = await recoverSessions({ ...finalizeDeps, signal: recoveryAbort.signal, recordingsDir: bot.RECORDINGS_DIR, instanceId: clustered?.instanceId });
      const recoveryWaitMs = options.recoveryWaitMs ?? RECOVERY_WAIT_MS;
      const settled = (await within(recovery.background.then(() => true), recoveryWaitMs)) === true;
      if (recovery.recovered.length > 0) log.info({ sessions: recovery.recovered, complete: settled }, "recovered sessions of the previous run");

      const stopRetention = startJournalRetention(bot.RECORDINGS_DIR, bot.JOURNAL_RETENTION_DAYS * 86_400_000, now, log);
      const supervisor = createSupervisor({
        deps: finalizeDeps,
        maxSessions: bot.MAX_CONCURRENT_SESSIONS,
        warmWorkers: bot.WARM_WORKERS,
        browserStartsAtOnce: bot.BROWSER_STARTS_AT_ONCE,
        settings: {
          workerModule: options.workerModule ?? DEFAULT_WORKER_MODULE,
          recordingsDir: bot.RECORDINGS_DIR,
          stopTimeoutMs: options.stopTimeoutMs,
          init: {
            lobbyWaitMs: bot.MEETING_WAIT_FOR_LOBBY * 60_000,
            maxRecordingMs: bot.MAX_RECORDING_MINUTES * 60_000,
            mic: { enabled: bot.MIC_PLAYBACK_ENABLED, disableNoiseSuppression: bot.DISABLE_NOISE_SUPPRESSION },
            chromiumPath: bot.CHROMIUM_PATH,
            logLevel: config.server.LOG_LEVEL,
            joinTimeoutMs: bot.JOIN_TIMEOUT_SECONDS * 1000,
            observe: bot.SPEAKER_TIMELINE,
            listenLowLatency: bot.LISTEN_LOW_LATENCY,
          },
        },
      });

      const router = Router();
      const deps: BotRouteDeps = { target: { router, prefix: "", registry }, config, repo, supervisor, auth: requireBotToken(bot.BOT_ACCESS_TOKEN), now, cluster, upgrades };
      // Internal routes and forwarding to a session's owner sit in front of every bot route.
      cluster?.mount(app);
      rootRoute(deps);
      joinRoute(deps);
      sessionRoutes(deps);
      timelineRoute(deps);
      audioRoutes(deps);
      evidenceRoutes(deps);
      const retention = startEvidenceRetention({ root: evidenceRootOf(bot.RECORDINGS_DIR), retentionDays: bot.EVIDENCE_RETENTION_DAYS, logger: log, isRunning: (id) => supervisor.get(id) !== undefined });
      const listen = listenRoutes(deps, log);
      for (const mount of options.routes ?? []) mount(deps);
      app.use(router);
      cluster?.startConsumer(supervisor);

      let leaving: Promise<void> | undefined;
      const leave = (): Promise<void> => (leaving ??= supervisor.shutdown(bot.SHUTDOWN_GRACE_SECONDS * 1000));
      return {
        ready: async () => {
          const problems = await botProblems(bot.CHROMIUM_PATH, store);
          const disk = await diskProblem({ recordingsDir: bot.RECORDINGS_DIR, minFreeMb: bot.MIN_FREE_DISK_MB, format: bot.RECORDING_FORMAT, limits: { maxRecordingMinutes: bot.MAX_RECORDING_MINUTES, lobbyWaitMinutes: bot.MEETING_WAIT_FOR_LOBBY } });
          if (disk) problems.disk = disk;
          else void diskReserve.ensure();
          return { ...problems, ...cluster?.ready() };
        },
        handOver: async () => cluster?.drain(supervisor),
        drain: leave,
        ...(cluster ? { upgrade: cluster.upgrade } : {}),
        async close() {
          retention.stop();
          stopRetention();
          await leave();
          listen.close();
          await cluster?.close();
          recoveryAbort.abort();
          await Promise.race([recovery.background, new Promise((r) => setTimeout(r, 5_000).unref())]);
          await notifier.close();
        },
      };
    },
  };
}

export const botFeature: Feature = createBotFeature();
