/**
 * The browser-level guard that keeps a bot from receiving, hence decoding, incoming video
 * (issue #20). Teams' own "Turn off incoming video" (worker/teams/incoming-video.ts) is used where
 * the page offers it; this guard holds when it does not, and before it is reached.
 *
 * How: an init script (runs in every frame before the page's own scripts; no `<script>` element,
 * so Trusted Types do not apply) wraps RTCPeerConnection so that, before any offer or answer is
 * made and after any remote description is applied, every video transceiver loses its receiving
 * direction: `recvonly` → `inactive`, `sendrecv` → `sendonly`. The negotiated SDP then says the
 * bot takes no video, so a conforming sender (Teams' media server, the fixture's) sends none and
 * nothing reaches a decoder. Audio transceivers and data channels are never touched: the
 * recording, the CSRCs of the `mainAudio` receiver and the `main-channel` data channel stay as
 * they were. Chosen over SDP munging (Chromium refuses many local-SDP edits, and the direction
 * API is the standard way) and over stopping tracks (a stopped remote track still decodes).
 *
 * Counts are kept under `window[Symbol.for("toamaisutaa.videoGuard")]` for tests and logs.
 */
import type { BrowserContext, Page } from "playwright-core";

export const VIDEO_GUARD_KEY = "toamaisutaa.videoGuard";

export interface VideoGuardCounts {
  /** Peer connections created in the page. */
  connections: number;
  /** Direction changes the guard made (one per video transceiver per negotiation). */
  demoted: number;
}

/**
 * The page-side script, as source text: a compiled function would carry the TypeScript runner's
 * helpers (esbuild's `__name`), which do not exist in the page. Called with the counts' key.
 */
const GUARD_SOURCE = `(key) => {
  const PC = window.RTCPeerConnection;
  const mark = Symbol.for(key);
  if (!PC || window[mark]) return;
  const counts = { connections: 0, demoted: 0 };
  Object.defineProperty(window, mark, { value: counts, enumerable: false });

  const demote = (pc) => {
    let transceivers;
    try { transceivers = pc.getTransceivers(); } catch { return; }
    for (const t of transceivers) {
      if (t.receiver.track.kind !== "video" || t.currentDirection === "stopped" || t.direction === "stopped") continue;
      const next = t.direction === "sendrecv" ? "sendonly" : t.direction === "recvonly" ? "inactive" : null;
      if (!next) continue;
      try { t.direction = next; counts.demoted += 1; } catch { /* stopping or closed: receives nothing */ }
    }
  };

  const proto = PC.prototype;
  const replace = (name, make) => {
    const original = proto[name];
    Object.defineProperty(proto, name, { configurable: true, writable: true, value: make(original) });
  };
  for (const name of ["createOffer", "createAnswer", "setLocalDescription"]) {
    replace(name, (original) => function (...args) {
      demote(this);
      // The legacy offerToReceiveVideo would add a receiving transceiver inside createOffer.
      const last = args[args.length - 1];
      if (name === "createOffer" && last && typeof last === "object" && "offerToReceiveVideo" in last) {
        args[args.length - 1] = { ...last, offerToReceiveVideo: false };
      }
      return original.apply(this, args);
    });
  }
  // A remote offer creates (or re-uses) receiving transceivers: demote them before any answer.
  replace("setRemoteDescription", (original) => function (...args) {
    return original.apply(this, args).then((result) => { demote(this); return result; });
  });
  replace("addTransceiver", (original) => function (...args) {
    const t = original.apply(this, args);
    demote(this);
    return t;
  });
  // Counts connections without changing what the constructor is (instanceof, prototype, statics).
  const Wrapped = new Proxy(PC, {
    construct(target, args, newTarget) {
      counts.connections += 1;
      return Reflect.construct(target, args, newTarget === Wrapped ? target : newTarget);
    },
  });
  window.RTCPeerConnection = Wrapped;
  if ("webkitRTCPeerConnection" in window) window.webkitRTCPeerConnection = Wrapped;
}`;

/** Installs the guard in every page and frame of the context from the next navigation on. */
export async function installVideoGuard(context: BrowserContext): Promise<void> {
  await context.addInitScript({ content: `(${GUARD_SOURCE})(${JSON.stringify(VIDEO_GUARD_KEY)});` });
}

/** The guard's counts in a page (null when the guard is not installed there). */
export async function videoGuardCounts(page: Page): Promise<VideoGuardCounts | null> {
  return page
    .evaluate((key) => ((window as unknown as Record<symbol, VideoGuardCounts | undefined>)[Symbol.for(key)] ?? null), VIDEO_GUARD_KEY)
    .catch(() => null);
}

/**
 * Whether workers install the guard: on unless TOAMAISUTAA_VIDEO_GUARD=0, which exists only so
 * that `make bench-bot` can measure what the guard saves (BENCH_VIDEO_GUARD=0).
 */
export function videoGuardEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.TOAMAISUTAA_VIDEO_GUARD !== "0";
}
