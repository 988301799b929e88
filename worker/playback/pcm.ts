/**
 * Headerless PCM as a live stream delivers it: 48 kHz mono in one of the RAW_FORMATS (ops.ts).
 * Sizes, durations and digital silence, for the jitter buffer that paces such a stream.
 */
import type { RawFormat } from "./ops.ts";

/** Every raw stream is 48 kHz mono (the player's `-ar 48000 -ac 1` input options). */
export const RATE = 48_000;
/** Below this (fraction of full scale, about -50 dBFS) a sample counts as silence. */
const SILENCE_LEVEL = 0.003;

export const SAMPLE_BYTES: Record<RawFormat, number> = { s16le: 2, s16be: 2, s32le: 4, f32le: 4, u8: 1 };

/** Bytes of `ms` milliseconds of audio, in whole samples. */
export function bytesFor(format: RawFormat, ms: number): number {
  return Math.round((RATE * ms) / 1000) * SAMPLE_BYTES[format];
}

/** Milliseconds of audio in `bytes`. */
export function durationMs(format: RawFormat, bytes: number): number {
  return (bytes / SAMPLE_BYTES[format] / RATE) * 1000;
}

function sampleAt(buf: Buffer, offset: number, format: RawFormat): number {
  switch (format) {
    case "s16le":
      return buf.readInt16LE(offset) / 32768;
    case "s16be":
      return buf.readInt16BE(offset) / 32768;
    case "s32le":
      return buf.readInt32LE(offset) / 2147483648;
    case "f32le":
      return buf.readFloatLE(offset);
    case "u8":
      return (buf.readUInt8(offset) - 128) / 128;
  }
}

/** True when every whole sample of `buf` is below the silence level. */
export function isSilent(buf: Buffer, format: RawFormat): boolean {
  const size = SAMPLE_BYTES[format];
  for (let o = 0; o + size <= buf.length; o += size) {
    const v = sampleAt(buf, o, format);
    if (!(Math.abs(v) < SILENCE_LEVEL)) return false;
  }
  return true;
}

/** `samples` of digital silence (u8 is unsigned: its zero level is 128). */
export function silence(format: RawFormat, samples: number): Buffer {
  return Buffer.alloc(samples * SAMPLE_BYTES[format], format === "u8" ? 128 : 0);
}
