import { open } from "node:fs/promises";
import { UnrepairableRecordingError, type RepairResult } from "./errors.ts";

// ffmpeg's header (RIFF, fmt, LIST/INFO, data) is under 100 bytes; 64 KiB leaves room for any
// metadata chunks a writer may put before `data`.
const HEADER_SCAN_BYTES = 64 * 1024;
// ffmpeg writes this into both size fields at start and fixes them on a clean stop only
// (media-pipeline.md "Repair after SIGKILL").
const UNKNOWN_SIZE = 0xffffffff;
const MAX_RIFF_SIZE = 0xffffffff;

interface WavLayout {
  channels: number;
  sampleRate: number;
  blockAlign: number;
  /** Offset of the first sample byte (just after the `data` chunk header). */
  dataOffset: number;
  declaredDataSize: number;
}

function parseLayout(path: string, head: Buffer): WavLayout {
  if (head.length < 12 || head.toString("ascii", 0, 4) !== "RIFF" || head.toString("ascii", 8, 12) !== "WAVE") {
    throw new UnrepairableRecordingError(path, "no RIFF/WAVE header");
  }
  let format: Omit<WavLayout, "dataOffset" | "declaredDataSize"> | null = null;
  let offset = 12;
  while (offset + 8 <= head.length) {
    const id = head.toString("ascii", offset, offset + 4);
    const size = head.readUInt32LE(offset + 4);
    if (id === "data") {
      if (!format) throw new UnrepairableRecordingError(path, "data chunk before fmt chunk");
      return { ...format, dataOffset: offset + 8, declaredDataSize: size };
    }
    if (id === "fmt ") {
      if (offset + 8 + 16 > head.length) break;
      const channels = head.readUInt16LE(offset + 10);
      const sampleRate = head.readUInt32LE(offset + 12);
      const blockAlign = head.readUInt16LE(offset + 20);
      if (channels === 0 || sampleRate === 0 || blockAlign === 0) {
        throw new UnrepairableRecordingError(path, "fmt chunk has zero channels, rate or block size");
      }
      format = { channels, sampleRate, blockAlign };
    }
    // Chunks are padded to even sizes (RIFF spec).
    offset += 8 + size + (size & 1);
  }
  throw new UnrepairableRecordingError(path, "header ends before the data chunk");
}

/**
 * Makes a WAV whose writer was killed playable: sets the RIFF and data sizes from the file length,
 * cut to whole frames. Done in place because a recording can be gigabytes; every step (truncate,
 * data size, RIFF size) leaves a file this function repairs again, so a crash midway loses nothing.
 */
export async function repairWav(path: string): Promise<RepairResult> {
  const handle = await open(path, "r+");
  try {
    const { size: fileBytes } = await handle.stat();
    const head = Buffer.alloc(Math.min(HEADER_SCAN_BYTES, fileBytes));
    await handle.read(head, 0, head.length, 0);
    const layout = parseLayout(path, head);
    const { dataOffset, declaredDataSize, blockAlign, sampleRate, channels } = layout;
    const result = (frames: number, bytes: number, repaired: boolean): RepairResult => ({
      bytes,
      frames,
      durationSec: frames / sampleRate,
      sampleRate,
      channels,
      repaired,
    });

    const clean =
      declaredDataSize !== UNKNOWN_SIZE &&
      declaredDataSize !== 0 &&
      declaredDataSize % blockAlign === 0 &&
      dataOffset + declaredDataSize <= fileBytes &&
      head.readUInt32LE(4) !== UNKNOWN_SIZE;
    if (clean) return result(declaredDataSize / blockAlign, fileBytes, false);

    // RIFF sizes are 32-bit: past 4 GiB the surplus cannot be described and is cut.
    const maxData = MAX_RIFF_SIZE - (dataOffset - 8);
    const dataBytes = Math.min(Math.max(fileBytes - dataOffset, 0), maxData);
    const frames = Math.floor(dataBytes / blockAlign);
    const dataSize = frames * blockAlign;
    const newLength = dataOffset + dataSize;

    if (newLength < fileBytes) await handle.truncate(newLength);
    const field = Buffer.alloc(4);
    field.writeUInt32LE(dataSize, 0);
    await handle.write(field, 0, 4, dataOffset - 4);
    field.writeUInt32LE(newLength - 8, 0);
    await handle.write(field, 0, 4, 4);
    await handle.sync();
    return result(frames, newLength, true);
  } finally {
    await handle.close();
  }
}
