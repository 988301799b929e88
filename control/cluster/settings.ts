/**
 * Whether this process is one instance of a cluster, and as what (issue #19 "The model"). Cluster
 * mode needs PostgreSQL plus INSTANCE_URL and CLUSTER_SECRET; with SQLite (or without those keys)
 * the service is the single instance it always was and nothing of control/cluster runs.
 */
import { hostname } from "node:os";
import { ConfigError } from "../config/error.ts";
import type { Config } from "../config/schema.ts";
import type { DiskCheck } from "../bot/disk/space.ts";
import type { RecordingFormat } from "../../shared/journal/records.ts";

export interface ClusterSettings {
  instanceId: string;
  /** Base URL other instances reach this one at, without a trailing slash. */
  instanceUrl: string;
  secret: string;
  maxSessions: number;
  /** How long SIGTERM keeps running sessions recording before the ordinary shutdown. */
  drainMs: number;
  /** The /join disk check of this instance's RECORDINGS_DIR (disk-room.ts), for a session of the configured format. */
  disk: DiskCheck & { format: RecordingFormat };
}

/** Instance ids name rows, log lines and (in Kubernetes) pods: DNS-label characters only. */
const INSTANCE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;
const MIN_SECRET_LENGTH = 16;

export const isPostgresUrl = (url: string): boolean => /^postgres(ql)?:\/\//.test(url);

export function clusterSettings(config: Config): ClusterSettings | null {
  const b = config.bot;
  if (!isPostgresUrl(config.server.DATABASE_URL) || !b.INSTANCE_URL || !b.CLUSTER_SECRET) return null;
  return {
    instanceId: b.INSTANCE_ID ?? defaultInstanceId(),
    instanceUrl: b.INSTANCE_URL.trim().replace(/\/+$/, ""),
    secret: b.CLUSTER_SECRET.trim(),
    maxSessions: b.MAX_CONCURRENT_SESSIONS,
    drainMs: (b.DRAIN_TIMEOUT_SECONDS ?? Math.ceil(b.MAX_RECORDING_MINUTES * 60)) * 1000,
    disk: {
      recordingsDir: b.RECORDINGS_DIR,
      minFreeMb: b.MIN_FREE_DISK_MB,
      format: b.RECORDING_FORMAT,
      limits: { maxRecordingMinutes: b.MAX_RECORDING_MINUTES, lobbyWaitMinutes: b.MEETING_WAIT_FOR_LOBBY },
    },
  };
}

/** The host name (a StatefulSet pod's name), cut to what an instance id may hold. */
export function defaultInstanceId(): string {
  const name = hostname().replace(/[^A-Za-z0-9._-]/g, "-").replace(/^[^A-Za-z0-9]+/, "").slice(0, 63);
  return name === "" ? "instance" : name;
}

/** Startup check: a half-configured cluster is refused rather than run as a lone instance. */
export function checkClusterConfig(config: Config): void {
  const b = config.bot;
  if (b.INSTANCE_ID !== undefined && !INSTANCE_ID.test(b.INSTANCE_ID.trim())) {
    throw new ConfigError("INSTANCE_ID", "must be 1-63 letters, digits, '.', '_' or '-', starting with a letter or digit");
  }
  if (b.INSTANCE_URL === undefined && b.CLUSTER_SECRET === undefined) return;
  if (!isPostgresUrl(config.server.DATABASE_URL)) {
    const key = b.INSTANCE_URL !== undefined ? "INSTANCE_URL" : "CLUSTER_SECRET";
    throw new ConfigError(key, "cluster mode needs PostgreSQL: set DATABASE_URL to postgres://… or remove INSTANCE_URL and CLUSTER_SECRET");
  }
  if (b.INSTANCE_URL === undefined) throw new ConfigError("INSTANCE_URL", "CLUSTER_SECRET is set: set INSTANCE_URL too (the base URL other instances reach this one at)");
  if (b.CLUSTER_SECRET === undefined) throw new ConfigError("CLUSTER_SECRET", "INSTANCE_URL is set: set CLUSTER_SECRET too (at least 16 random characters, shared by every instance)");
  let protocol = "";
  try {
    protocol = new URL(b.INSTANCE_URL.trim()).protocol;
  } catch {
    // reported below
  }
  if (protocol !== "http:" && protocol !== "https:") throw new ConfigError("INSTANCE_URL", "must be an absolute http:// or https:// URL (e.g. http://recorder-0.recorder:8000)");
  if (b.CLUSTER_SECRET.trim().length < MIN_SECRET_LENGTH) {
    throw new ConfigError("CLUSTER_SECRET", `must be at least ${MIN_SECRET_LENGTH} characters (e.g. \`openssl rand -base64 32\`)`);
  }
}
