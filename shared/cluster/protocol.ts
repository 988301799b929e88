/**
 * What instances of one cluster agree on (issue #19): the liveness clock, the internal route
 * prefix and its secret header, and which public routes are bound to the instance that runs the
 * session (and so are forwarded to it). A route another engineer adds under one of these shapes is
 * forwarded by mounting it; nothing else needs to know about the cluster.
 */

/** Every instance writes its heartbeat this often. */
export const HEARTBEAT_INTERVAL_MS = 2_000;
/** An instance whose heartbeat is older than this is dead. */
export const DEAD_AFTER_MS = 15_000;
/** How often every instance looks for dead instances' sessions (takeover within DEAD_AFTER + this). */
export const TAKEOVER_SWEEP_MS = 5_000;

/** Internal routes live under this prefix; none of them is in the public OpenAPI document. */
export const INTERNAL_PREFIX = "/_cluster";
/** A public request forwarded to its owner arrives as `INTERNAL_PREFIX + FORWARD_PATH + original URL`. */
export const FORWARD_PATH = "/forward";
/** The header carrying CLUSTER_SECRET on every internal request. */
export const SECRET_HEADER = "x-toamaisutaa-cluster-secret";
/** Set on a forwarded request (by the forwarding instance): the instance it came through. */
export const VIA_HEADER = "x-toamaisutaa-forwarded-by";

/**
 * Owner-bound routes: the session id is the first capture. `/stop`, every `/audio/…` route (the
 * ingest PUT and the listen WebSocket included), evidence and the live timeline.
 */
export const OWNER_BOUND_PATHS: readonly RegExp[] = [
  /^\/stop\/([^/?#]+)\/?(?:[?#]|$)/,
  /^\/audio\/([^/?#]+)\/[^?#]*/,
  /^\/sessions\/([^/?#]+)\/(?:evidence|timeline)(?:[/?#]|$)/,
];

/** The session id an owner-bound URL names, or null when the URL is not owner-bound. */
export function ownerBoundSession(url: string): string | null {
  for (const pattern of OWNER_BOUND_PATHS) {
    const match = pattern.exec(url);
    if (match?.[1]) {
      try {
        return decodeURIComponent(match[1]);
      } catch {
        return null;
      }
    }
  }
  return null;
}
