/**
 * Cluster settings (issue #19): plain environment variables beside the bot's. Cluster mode is on
 * when DATABASE_URL is PostgreSQL and both INSTANCE_URL and CLUSTER_SECRET are set
 * (control/cluster/settings.ts); otherwise these keys do nothing.
 */
import { int, text } from "./fields.ts";

export const clusterShape = {
  /** Stable name of this instance (its volume and its sessions); default: the host name. */
  INSTANCE_ID: text(),
  /** Base URL other instances reach this one at (in Kubernetes: the headless Service's pod name). */
  INSTANCE_URL: text(),
  /** Shared secret of the instances' internal routes; at least 16 characters. */
  CLUSTER_SECRET: text(),
  /** SIGTERM in cluster mode waits this long for running sessions; default MAX_RECORDING_MINUTES. */
  DRAIN_TIMEOUT_SECONDS: int(undefined, 0, 7 * 24 * 3600),
};
