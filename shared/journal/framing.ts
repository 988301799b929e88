import { crc32 } from "node:zlib";

/**
 * One journal line: `<byte length> <crc32 as 8 hex digits> <json>\n`.
 * The length tells a torn tail (fewer bytes than announced) from a complete record, and the CRC
 * catches bytes that reached the disk wrong or a record overwritten by garbage; JSON.stringify
 * never emits a raw newline, so the trailing `\n` is a last check that the record ended where the
 * length said.
 */
export function encodeFrame(json: string): Buffer {
  const body = Buffer.from(json, "utf8");
  const crc = crc32(body).toString(16).padStart(8, "0");
  return Buffer.concat([Buffer.from(`${body.length} ${crc} `, "ascii"), body, Buffer.from("\n")]);
}

export type FrameDamageReason = "truncated" | "bad_header" | "bad_crc";

export interface DecodedFrames {
  /** Every intact frame before the first damaged one: its start offset and JSON text. */
  frames: { offset: number; body: string }[];
  /** Bytes from the start of the buffer that hold intact frames. */
  validBytes: number;
  damage: { offset: number; reason: FrameDamageReason } | null;
}

// A length needs at most 10 digits (records are far below 10 GB); more means garbage.
const MAX_LENGTH_DIGITS = 10;
const SPACE = 0x20;
const NEWLINE = 0x0a;

function isDigit(byte: number): boolean {
  return byte >= 0x30 && byte <= 0x39;
}

function isLowerHex(byte: number): boolean {
  return isDigit(byte) || (byte >= 0x61 && byte <= 0x66);
}

/** Decodes frames until the end of the buffer or the first damaged frame; never throws. */
export function decodeFrames(buf: Buffer): DecodedFrames {
  const frames: { offset: number; body: string }[] = [];
  let pos = 0;
  const fail = (reason: FrameDamageReason): DecodedFrames => ({
    frames,
    validBytes: pos,
    damage: { offset: pos, reason },
  });
  while (pos < buf.length) {
    let cursor = pos;
    while (cursor < buf.length && cursor - pos <= MAX_LENGTH_DIGITS && isDigit(buf[cursor] ?? 0)) {
      cursor++;
    }
    if (cursor >= buf.length) return fail("truncated");
    const digits = cursor - pos;
    if (digits === 0 || digits > MAX_LENGTH_DIGITS || buf[cursor] !== SPACE) return fail("bad_header");
    const length = Number(buf.toString("ascii", pos, cursor));
    const crcStart = cursor + 1;
    const bodyStart = crcStart + 9;
    if (bodyStart > buf.length) {
      // Whatever arrived of the CRC must still look like one, or this is not a torn tail.
      for (let i = crcStart; i < buf.length; i++) {
        const ok = i - crcStart < 8 ? isLowerHex(buf[i] ?? 0) : buf[i] === SPACE;
        if (!ok) return fail("bad_header");
      }
      return fail("truncated");
    }
    for (let i = crcStart; i < crcStart + 8; i++) {
      if (!isLowerHex(buf[i] ?? 0)) return fail("bad_header");
    }
    if (buf[crcStart + 8] !== SPACE) return fail("bad_header");
    const bodyEnd = bodyStart + length;
    if (bodyEnd + 1 > buf.length) return fail("truncated");
    const body = buf.subarray(bodyStart, bodyEnd);
    const expected = Number.parseInt(buf.toString("ascii", crcStart, crcStart + 8), 16);
    if (crc32(body) !== expected || buf[bodyEnd] !== NEWLINE) return fail("bad_crc");
    frames.push({ offset: pos, body: body.toString("utf8") });
    pos = bodyEnd + 1;
  }
  return { frames, validBytes: pos, damage: null };
}
