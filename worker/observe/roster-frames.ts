/**
 * Roster updates on the page's signalling WebSocket (teams-dom.md "Speakers and participants"):
 * frames `3:::{url, headers, body}` whose `url` ends in `rosterUpdate/` carry, as base64 of
 * zlib-compressed JSON, `{participants: {<MRI>: {details: {id, displayName}, state, meetingRole,
 * endpoints: {…: {call: {mediaStreams: [{type, sourceId, direction}]}}}}}}`. Late joiners get
 * only deltas; the same shape comes from the HTTP roster snapshot. Every layer is read leniently
 * (plain JSON, zlib, raw deflate or gzip; body as text or as an object): one bot's view of the
 * format, not a contract.
 */
import { gunzipSync, inflateRawSync, inflateSync } from "node:zlib";

export interface RosterEntry {
  mri: string;
  displayName: string | null;
  /** true: in the call; false: left ("inactive"); null: the frame did not say. */
  active: boolean | null;
  /** Audio sourceIds (they equal the CSRCs in the mixed stream). */
  sources: number[];
}

const FRAME_PREFIX = /^\d+:[^:]*:[^:]*:/;

/** The roster entries in one WebSocket frame; empty when the frame is not a roster update. */
export function rosterFromFrame(payload: string | Buffer): RosterEntry[] {
  const text = typeof payload === "string" ? payload : payload.toString("utf8");
  if (!text.includes("rosterUpdate")) return [];
  const prefix = FRAME_PREFIX.exec(text);
  const envelope = parseJson(prefix ? text.slice(prefix[0].length) : text);
  if (!isObject(envelope)) return [];
  if (typeof envelope.url === "string" && !/rosterUpdate\/?(\?|$)/.test(envelope.url)) return [];
  return rosterFromBody(envelope.body ?? envelope);
}

/** Entries from a roster body (a frame's `body` or an HTTP snapshot). */
export function rosterFromBody(body: unknown): RosterEntry[] {
  const value = typeof body === "string" ? decodeBody(body) : body;
  if (!isObject(value)) return [];
  const participants = isObject(value.participants) ? value.participants : null;
  if (!participants) return [];
  const entries: RosterEntry[] = [];
  for (const [mri, raw] of Object.entries(participants)) {
    if (!isObject(raw)) continue;
    const details = isObject(raw.details) ? raw.details : {};
    const displayName = typeof details.displayName === "string" ? details.displayName : typeof raw.displayName === "string" ? raw.displayName : null;
    const state = typeof raw.state === "string" ? raw.state.toLowerCase() : null;
    entries.push({
      mri: typeof details.id === "string" && details.id ? details.id : mri,
      displayName,
      active: state === "active" ? true : state === "inactive" ? false : null,
      sources: audioSources(raw.endpoints),
    });
  }
  return entries;
}

function audioSources(endpoints: unknown): number[] {
  const found = new Set<number>();
  if (!isObject(endpoints)) return [];
  for (const endpoint of Object.values(endpoints)) {
    const call = isObject(endpoint) && isObject(endpoint.call) ? endpoint.call : null;
    const streams = call && Array.isArray(call.mediaStreams) ? call.mediaStreams : [];
    for (const s of streams) {
      if (!isObject(s) || String(s.type).toLowerCase() !== "audio") continue;
      const id = Number(s.sourceId);
      if (Number.isInteger(id) && id >= 0) found.add(id);
    }
  }
  return [...found];
}

function decodeBody(body: string): unknown {
  const direct = parseJson(body);
  if (direct !== undefined) return direct;
  const bytes = Buffer.from(body, "base64");
  for (const inflate of [inflateSync, inflateRawSync, gunzipSync]) {
    try {
      const parsed = parseJson(inflate(bytes).toString("utf8"));
      if (parsed !== undefined) return parsed;
    } catch {
      // next form
    }
  }
  return parseJson(bytes.toString("utf8"));
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
