/**
 * Live audio out (issue #18): the rules both the control plane and the worker need. A listener
 * asks `POST /audio/{session_id}/listen` for a format, gets a WebSocket URL whose path carries
 * its token (the only credential, as for ingest), and receives 20 ms frames of s16le PCM of
 * what the recording hears, plus JSON text frames of events.
 */
import { z } from "zod";

/** The rates a listener may ask for: telephony, wideband, the speech APIs' 24 kHz, and the recording's own. */
export const LISTEN_SAMPLE_RATES = [8000, 16000, 24000, 48000] as const;
export type ListenSampleRate = (typeof LISTEN_SAMPLE_RATES)[number];
export const LISTEN_CHANNELS = [1, 2] as const;
export type ListenChannels = (typeof LISTEN_CHANNELS)[number];

/** Every binary frame holds exactly this much audio (the contract). */
export const FRAME_MS = 20;
export const SAMPLE_FORMAT = "s16le";

/** The issue: up to 4 listeners per session; a fifth is refused with 409. */
export const MAX_LISTENERS = 4;

export interface ListenFormat {
  sampleRate: ListenSampleRate;
  channels: ListenChannels;
}

/** Bytes of one 20 ms frame of s16le in `format`. */
export function frameBytes(format: ListenFormat): number {
  return ((format.sampleRate * FRAME_MS) / 1000) * format.channels * 2;
}

/** Milliseconds of audio in `bytes` of `format`. */
export function audioMs(format: ListenFormat, bytes: number): number {
  return (bytes / (format.sampleRate * format.channels * 2)) * 1000;
}

/** A short, stable name for a format: one tap serves every listener with the same key. */
export function formatKey(format: ListenFormat): string {
  return `${format.sampleRate}x${format.channels}`;
}

/** The optional JSON body of `POST /audio/{session_id}/listen`. */
export const listenBodySchema = z.preprocess(
  (v) => v ?? {},
  z.object({
    sample_rate: z.union(LISTEN_SAMPLE_RATES.map((r) => z.literal(r)) as [z.ZodLiteral<8000>, z.ZodLiteral<16000>, z.ZodLiteral<24000>, z.ZodLiteral<48000>]).default(16000),
    channels: z.union([z.literal(1), z.literal(2)]).default(1),
    events: z.boolean().default(true),
  }),
);
export type ListenBody = z.output<typeof listenBodySchema>;

/** The WebSocket path: `/audio/<session_id>/listen/<token>`. */
export function listenPath(sessionId: string, token: string): string {
  return `/audio/${encodeURIComponent(sessionId)}/listen/${token}`;
}

const LISTEN_PATH = /^\/audio\/([^/?#]+)\/listen\/([^/?#]+)\/?$/;

/** The session id and token of a listen URL's path (query ignored); null for any other path. */
export function parseListenPath(url: string): { sessionId: string; token: string } | null {
  const path = url.split("?")[0] ?? "";
  const match = LISTEN_PATH.exec(path);
  if (!match?.[1] || !match[2]) return null;
  try {
    return { sessionId: decodeURIComponent(match[1]), token: decodeURIComponent(match[2]) };
  } catch {
    return null;
  }
}

/** `ws(s)://` for an `http(s)://` base (PUBLIC_BASE_URL or the request's own host). */
export function listenUrl(httpBase: string, sessionId: string, token: string): string {
  const base = httpBase.replace(/\/+$/, "").replace(/^http(s?):\/\//i, (_m, s: string) => `ws${s}://`);
  return `${base}${listenPath(sessionId, token)}`;
}

/** WebSocket close codes and reasons (RFC 6455 7.4.1). */
export const CLOSE = {
  /** 1000: the session ended, or the token was revoked by DELETE. */
  normal: 1000,
  /** 1008 (policy violation): the listener fell 5 s behind real time. */
  tooSlow: 1008,
  /** 1011: the audio tap failed while the session went on. */
  internal: 1011,
  /** 1001: the service is shutting down. */
  goingAway: 1001,
} as const;

export const CLOSE_REASON = {
  sessionEnded: "session ended",
  revoked: "listener closed",
  tooSlow: "listener fell 5 s behind",
  tapFailed: "the audio tap failed",
  shutdown: "service shutting down",
} as const;
