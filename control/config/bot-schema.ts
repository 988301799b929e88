/**
 * The recorder bot's settings: plain environment variables (recorder-bot.md Limits,
 * decisions.md). Minutes accept decimals so tests need not wait whole minutes.
 */
import { z } from "zod";
import { bool, decimal, int, list, oneOf, text, textDefault } from "./fields.ts";
import { clusterShape } from "./cluster-schema.ts";

export const botSchema = z
  .object({
    BOT_ACCESS_TOKEN: text(),
    RECORDINGS_DIR: textDefault("./recordings"),
    RECORDING_FORMAT: oneOf(["wav", "flac"] as const, "wav"),
    MEETING_WAIT_FOR_LOBBY: decimal(30, 0.01),
    MAX_RECORDING_MINUTES: decimal(240, 0.01),
    /** Each bot is one Chromium (~400 MB PSS, ~15% of a core): 8 fit the 2-core reference box. */
    MAX_CONCURRENT_SESSIONS: int(8, 1, 1000),
    /** Workers kept ready (PulseAudio + Chromium on a blank page) for the next /join; 0 = none. */
    WARM_WORKERS: int(1, 0, 64),
    /** Workers that start Chromium at the same moment, the others wait their turn; 0 = one per CPU core. */
    BROWSER_STARTS_AT_ONCE: int(0, 0, 64),
    MEETING_ALLOWED_HOSTS: list(["teams.microsoft.com", "teams.live.com"]),
    BOT_DISPLAY_NAME: textDefault("Meeting Recorder"),
    MIC_PLAYBACK_ENABLED: bool(false),
    DISABLE_NOISE_SUPPRESSION: bool(true),
    MEDIA_DIR: textDefault("/app/media"),
    MAX_UPLOAD_MB: decimal(100, 0.001, 10_000),
    WEBHOOK_URL: text(),
    WEBHOOK_EVENTS: bool(false),
    WEBHOOK_SECRET: text(),
    /** Base of the ingest URL handed to audio producers; derived from the request when unset. */
    PUBLIC_BASE_URL: text(),
    /** How long a SIGTERM waits for sessions to leave and close their files before the crash path. */
    SHUTDOWN_GRACE_SECONDS: int(20, 0, 3600),
    CHROMIUM_PATH: textDefault("/usr/bin/chromium"),
    /** Free space RECORDINGS_DIR keeps beyond every session's worst case; /join answers 507 below it. */
    MIN_FREE_DISK_MB: decimal(512, 0),
    /** Days a finished session's journal stays in RECORDINGS_DIR/.sessions (decimals allowed). */
    JOURNAL_RETENTION_DAYS: decimal(7, 0),
    /** #16: a join that reaches neither the lobby nor the call in this time ends `prejoin_stuck`. */
    JOIN_TIMEOUT_SECONDS: decimal(120, 1, 3600),
    /** #16: evidence folders (RECORDINGS_DIR/.evidence/<id>) older than this are deleted. */
    EVIDENCE_RETENTION_DAYS: decimal(14, 0.00001, 3650),
    ...clusterShape,
    /** Follow participants and speakers and store a timeline beside each recording (issue #17). */
    SPEAKER_TIMELINE: bool(true),
    /**
     * Without a microphone, keep each bot's audio flowing in short blocks (worker/listen/sink-pacer.ts)
     * so that a listener who connects at any time hears the meeting ~110 ms late from the start,
     * not ~250 ms for its first ~10 s; ~5 % of a core more per bot (README, live audio out).
     */
    LISTEN_LOW_LATENCY: bool(false),
  })
  .strict();

export const serverSchema = z
  .object({
    PORT: int(8000, 0, 65535),
    HOST: textDefault("0.0.0.0"),
    DATABASE_URL: textDefault("file:./data/app.db"),
    LOG_LEVEL: oneOf(["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const, "info"),
    /** When set, GET /metrics needs `Authorization: Bearer <METRICS_TOKEN>`. */
    METRICS_TOKEN: text(),
  })
  .strict()
  .superRefine((v, ctx) => {
    if (!/^(file:|postgres(ql)?:\/\/)/.test(v.DATABASE_URL)) {
      ctx.addIssue({ code: "custom", path: ["DATABASE_URL"], message: "must start with file: (SQLite) or postgres:// (PostgreSQL)" });
    }
  });
