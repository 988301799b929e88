/**
 * The worker → control plane streams of live listening, over the worker's unix socket: the
 * control plane connects, writes one JSON line (`hello`) naming the stream, and reads until the
 * socket ends:
 * - `audio`: raw s16le PCM in the hello's format, written by the worker's tap process (parec)
 *   straight into the socket: the audio never passes through the worker's JavaScript. One per
 *   format listened to; the control plane cuts it into frames and fans it out.
 * - `events`: one per listener, frames of `[kind: u8][length: u32 BE][payload]` (events, and a
 *   last `end` when the session is over).
 */
import { z } from "zod";
import { LISTEN_CHANNELS, LISTEN_SAMPLE_RATES } from "./protocol.ts";

export const FRAME_KIND = {
  /** One event as UTF-8 JSON (shared/listen/events.ts). */
  event: 1,
  /** The session ended: JSON `{code, reason}`; the socket ends after it. */
  end: 2,
} as const;
export type FrameKind = (typeof FRAME_KIND)[keyof typeof FRAME_KIND];

const HEADER_BYTES = 5;
/**
 * What the worker lets pile up unread on one of its listen sockets. The control plane reads its
 * end at once, always (slow WebSocket consumers are handled there); this much unread means it is
 * stuck, and the connection goes, so the worker's memory stays bounded whatever happens there.
 */
export const MAX_WORKER_BACKLOG_BYTES = 256 * 1024;
/** Far above any event: a larger length is a broken stream. */
const MAX_PAYLOAD = 1 << 20;

export const audioHelloSchema = z.object({
  stream: z.literal("audio"),
  sample_rate: z.union(LISTEN_SAMPLE_RATES.map((r) => z.literal(r)) as [z.ZodLiteral<8000>, z.ZodLiteral<16000>, z.ZodLiteral<24000>, z.ZodLiteral<48000>]),
  channels: z.union(LISTEN_CHANNELS.map((c) => z.literal(c)) as [z.ZodLiteral<1>, z.ZodLiteral<2>]),
});
export const eventsHelloSchema = z.object({ stream: z.literal("events"), events: z.boolean() });
export const helloSchema = z.discriminatedUnion("stream", [audioHelloSchema, eventsHelloSchema]);
export type AudioHello = z.infer<typeof audioHelloSchema>;
export type EventsHello = z.infer<typeof eventsHelloSchema>;
export type Hello = z.infer<typeof helloSchema>;

export function encodeFrame(kind: FrameKind, payload: Buffer): Buffer {
  const header = Buffer.allocUnsafe(HEADER_BYTES);
  header.writeUInt8(kind, 0);
  header.writeUInt32BE(payload.length, 1);
  return Buffer.concat([header, payload]);
}

export interface DecodedFrame {
  kind: FrameKind;
  payload: Buffer;
}

/** Reassembles frames from socket chunks of any size. */
export class FrameDecoder {
  #pending: Buffer[] = [];
  #pendingBytes = 0;

  /** Feeds a chunk; returns the frames it completed. Throws on a stream that is not this protocol. */
  push(chunk: Buffer): DecodedFrame[] {
    this.#pending.push(chunk);
    this.#pendingBytes += chunk.length;
    const frames: DecodedFrame[] = [];
    if (this.#pendingBytes < HEADER_BYTES) return frames;
    let buf = this.#pending.length === 1 ? (this.#pending[0] as Buffer) : Buffer.concat(this.#pending);
    let offset = 0;
    while (buf.length - offset >= HEADER_BYTES) {
      const kind = buf.readUInt8(offset);
      const length = buf.readUInt32BE(offset + 1);
      if (kind < FRAME_KIND.event || kind > FRAME_KIND.end || length > MAX_PAYLOAD) throw new Error(`not a listen frame (kind ${kind}, length ${length})`);
      if (buf.length - offset - HEADER_BYTES < length) break;
      // A copy: a queued frame must not pin the whole socket chunk it arrived in (memory bound).
      frames.push({ kind: kind as FrameKind, payload: Buffer.from(buf.subarray(offset + HEADER_BYTES, offset + HEADER_BYTES + length)) });
      offset += HEADER_BYTES + length;
    }
    buf = buf.subarray(offset);
    this.#pending = buf.length > 0 ? [buf] : [];
    this.#pendingBytes = buf.length;
    return frames;
  }
}
