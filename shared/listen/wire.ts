/**
 * The worker → control plane stream of one listener, over the worker's unix socket: the control
 * plane connects, writes one JSON line (`hello`), and reads frames of
 * `[kind: u8][length: u32 BE][payload]` until the socket ends.
 */
import { z } from "zod";
import { LISTEN_CHANNELS, LISTEN_SAMPLE_RATES } from "./protocol.ts";

export const FRAME_KIND = {
  /** One 20 ms frame of s16le PCM in the listener's format. */
  audio: 1,
  /** One event as UTF-8 JSON (shared/listen/events.ts). */
  event: 2,
  /** The session ended: JSON `{reason}`; the socket ends after it. */
  end: 3,
} as const;
export type FrameKind = (typeof FRAME_KIND)[keyof typeof FRAME_KIND];

const HEADER_BYTES = 5;
/** Far above any frame (20 ms of 48 kHz stereo is 3840 bytes): a larger length is a broken stream. */
const MAX_PAYLOAD = 1 << 20;

export const helloSchema = z.object({
  sample_rate: z.union(LISTEN_SAMPLE_RATES.map((r) => z.literal(r)) as [z.ZodLiteral<8000>, z.ZodLiteral<16000>, z.ZodLiteral<24000>, z.ZodLiteral<48000>]),
  channels: z.union(LISTEN_CHANNELS.map((c) => z.literal(c)) as [z.ZodLiteral<1>, z.ZodLiteral<2>]),
  events: z.boolean(),
});
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
      if (kind < 1 || kind > 3 || length > MAX_PAYLOAD) throw new Error(`not a listen frame (kind ${kind}, length ${length})`);
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
