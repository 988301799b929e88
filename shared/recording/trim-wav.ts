/**
 * Trimming the head of a WAV without copying it (issue #15): the bytes before the cut become a
 * `JUNK` chunk, which every RIFF reader skips, and a new `data` chunk header is written just
 * before the first kept sample. Two 8-byte writes, whatever the file's size; the file keeps its
 * length (the lobby's bytes stay on disk until the file is stored and the local copy deleted).
 *
 * Crash safety: the new `data` header is written first, inside the samples that are being cut
 * (the old layout stays valid, at worst with 8 changed bytes in the part nobody keeps), then the
 * old `data` header becomes the `JUNK` header in one aligned 8-byte write. Idempotent: a `JUNK`
 * chunk right before `data` marks the samples already cut, so a second call cuts only the rest.
 */
import { open, type FileHandle } from "node:fs/promises";
import { UnrepairableRecordingError } from "./errors.ts";

const UNKNOWN_SIZE = 0xffffffff;
/** The `fmt ` and `data` chunks of any writer sit well inside this; a JUNK chunk is skipped by size. */
const MAX_CHUNKS = 64;

export interface WavTrimResult {
  /** Seconds cut in total (this call and earlier ones). */
  trimmedSec: number;
  /** Seconds of audio left. */
  durationSec: number;
  /** False when there was nothing (more) to cut. */
  changed: boolean;
  bytes: number;
}

interface Layout {
  sampleRate: number;
  blockAlign: number;
  dataHeader: number;
  dataSize: number;
  /** Where the first sample of the untrimmed file was: the JUNK header + 8 when one precedes data. */
  origin: number;
  fileBytes: number;
}

async function readAt(handle: FileHandle, offset: number, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  const { bytesRead } = await handle.read(buf, 0, length, offset);
  return buf.subarray(0, bytesRead);
}

async function layoutOf(path: string, handle: FileHandle): Promise<Layout> {
  const { size: fileBytes } = await handle.stat();
  const riff = await readAt(handle, 0, 12);
  if (riff.length < 12 || riff.toString("ascii", 0, 4) !== "RIFF" || riff.toString("ascii", 8, 12) !== "WAVE") {
    throw new UnrepairableRecordingError(path, "no RIFF/WAVE header");
  }
  let offset = 12;
  let fmt: { sampleRate: number; blockAlign: number } | null = null;
  let previous: { id: string; offset: number } | null = null;
  for (let i = 0; i < MAX_CHUNKS && offset + 8 <= fileBytes; i++) {
    const header = await readAt(handle, offset, 8);
    const id = header.toString("ascii", 0, 4);
    const size = header.readUInt32LE(4);
    if (id === "fmt ") {
      const body = await readAt(handle, offset + 8, 16);
      fmt = { sampleRate: body.readUInt32LE(4), blockAlign: body.readUInt16LE(12) };
      if (fmt.sampleRate === 0 || fmt.blockAlign === 0) throw new UnrepairableRecordingError(path, "fmt chunk has zero rate or block size");
    } else if (id === "data") {
      if (!fmt) throw new UnrepairableRecordingError(path, "data chunk before fmt chunk");
      const origin = previous?.id === "JUNK" ? previous.offset + 8 : offset + 8;
      const available = fileBytes - (offset + 8);
      const dataSize = size === UNKNOWN_SIZE || size > available ? available - (available % fmt.blockAlign) : size;
      return { ...fmt, dataHeader: offset, dataSize, origin, fileBytes };
    }
    previous = { id, offset };
    offset += 8 + size + (size & 1);
  }
  throw new UnrepairableRecordingError(path, "no data chunk");
}

/** Cuts the first `offsetSec` seconds of the WAV's audio (counted from its untrimmed start). */
export async function trimWavHead(path: string, offsetSec: number): Promise<WavTrimResult> {
  const handle = await open(path, "r+");
  try {
    const l = await layoutOf(path, handle);
    const byteRate = l.sampleRate * l.blockAlign;
    const dataStart = l.dataHeader + 8;
    const dataEnd = dataStart + l.dataSize;
    const already = dataStart - l.origin;
    // Whole frames, an even chunk size (RIFF pads odd chunks), room for the 8-byte JUNK header.
    let want = Math.floor(Math.max(0, offsetSec) * l.sampleRate) * l.blockAlign;
    want = Math.min(want, Math.floor((dataEnd - l.origin) / l.blockAlign) * l.blockAlign);
    if (want % 2 === 1) want -= l.blockAlign;
    const result = (cut: number, changed: boolean): WavTrimResult => ({
      trimmedSec: cut / byteRate,
      durationSec: (dataEnd - (l.origin + cut)) / byteRate,
      changed,
      bytes: l.fileBytes,
    });
    if (want <= already || want < 8) return result(already, false);
    const newDataHeader = l.origin + want - 8;
    const header = Buffer.alloc(8);
    header.write("data", 0, "ascii");
    header.writeUInt32LE(dataEnd - (newDataHeader + 8), 4);
    await handle.write(header, 0, 8, newDataHeader);
    await handle.sync();
    header.write("JUNK", 0, "ascii");
    header.writeUInt32LE(newDataHeader - l.origin, 4);
    await handle.write(header, 0, 8, l.origin - 8);
    await handle.sync();
    return result(want, true);
  } finally {
    await handle.close();
  }
}
