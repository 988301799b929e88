import { execFile, type ExecFileException } from "node:child_process";
import { randomBytes } from "node:crypto";
import { open, stat, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { promisify } from "node:util";
import { replaceDurably, TEMP_PREFIX } from "../journal/durable-fs.ts";
import { UnrepairableRecordingError, type RepairResult } from "./errors.ts";

export interface FlacStreamInfo {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  /** Samples per channel; 0 when the writer never finished (SIGKILL). */
  totalSamples: number;
}

// "fLaC" + 4-byte metadata block header + 34-byte STREAMINFO (FLAC format, RFC 9639 §8.2).
const STREAMINFO_END = 42;

export async function readFlacStreamInfo(path: string): Promise<FlacStreamInfo> {
  const handle = await open(path, "r");
  const head = Buffer.alloc(STREAMINFO_END);
  try {
    const { bytesRead } = await handle.read(head, 0, STREAMINFO_END, 0);
    if (bytesRead < STREAMINFO_END || head.toString("ascii", 0, 4) !== "fLaC" || ((head[4] ?? 0) & 0x7f) !== 0) {
      throw new UnrepairableRecordingError(path, "no FLAC STREAMINFO header");
    }
  } finally {
    await handle.close();
  }
  // Bytes 18..25: sample rate (20 bits), channels-1 (3), bits per sample-1 (5), total samples (36).
  const packed = head.readBigUInt64BE(18);
  return {
    sampleRate: Number(packed >> 44n),
    channels: Number((packed >> 41n) & 0x7n) + 1,
    bitsPerSample: Number((packed >> 36n) & 0x1fn) + 1,
    totalSamples: Number(packed & 0xfffffffffn),
  };
}

function toResult(info: FlacStreamInfo, bytes: number, repaired: boolean): RepairResult {
  return {
    bytes,
    frames: info.totalSamples,
    durationSec: info.sampleRate > 0 ? info.totalSamples / info.sampleRate : 0,
    sampleRate: info.sampleRate,
    channels: info.channels,
    repaired,
  };
}

/**
 * A FLAC whose ffmpeg was killed stays decodable but its STREAMINFO says 0 samples and has no MD5;
 * `-c copy` keeps that header, so it is re-encoded (media-pipeline.md "Repair after SIGKILL").
 * ffmpeg decodes up to the last whole frame of a file cut at any byte and exits 0. The new file is
 * written beside the old one and renamed over it, so a crash leaves one complete version.
 */
export async function repairFlac(path: string): Promise<RepairResult> {
  const before = await readFlacStreamInfo(path);
  if (before.totalSamples > 0) return toResult(before, (await stat(path)).size, false);

  const temp = join(dirname(path), `${TEMP_PREFIX}${randomBytes(6).toString("hex")}-${basename(path)}`);
  try {
    const args = ["-nostdin", "-hide_banner", "-v", "error", "-i", path, "-map", "0:a:0", "-c:a", "flac", "-f", "flac", "-y", temp];
    const failure = await promisify(execFile)("ffmpeg", args).then(
      () => null,
      (error: ExecFileException & { stderr?: string }) => error,
    );
    if (failure) {
      throw new UnrepairableRecordingError(path, `ffmpeg exited ${String(failure.code ?? failure.signal)}: ${(failure.stderr ?? "").slice(-500)}`);
    }
    const after = await readFlacStreamInfo(temp);
    await replaceDurably(temp, path);
    return toResult(after, (await stat(path)).size, true);
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}
