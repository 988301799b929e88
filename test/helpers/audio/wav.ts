import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { promisify } from "node:util";

const execFileAsync = promisify(execFile);

export interface Wav {
  sampleRate: number;
  channels: number;
  /** Interleaved s16 samples, trimmed to whole frames. */
  samples: Int16Array;
  /** Number of frames (samples per channel). */
  frames: number;
  durationSec: number;
}

/** The size an ffmpeg WAV keeps when it was killed before it could rewrite its header. */
const UNKNOWN_SIZE = 0xffffffff;

/**
 * Reads a PCM s16le WAV. Tolerates a header whose RIFF/data sizes are 0xFFFFFFFF (or simply
 * wrong) by reading the data chunk to the end of the file, trimmed to whole frames.
 */
export async function readWav(path: string): Promise<Wav> {
  const buf = await readFile(path);
  if (buf.length < 12 || buf.toString("ascii", 0, 4) !== "RIFF" || buf.toString("ascii", 8, 12) !== "WAVE") {
    throw new Error(`${path} is not a RIFF/WAVE file (${buf.length} bytes)`);
  }
  let offset = 12;
  let sampleRate = 0;
  let channels = 0;
  let bits = 0;
  let format = 0;
  while (offset + 8 <= buf.length) {
    const id = buf.toString("ascii", offset, offset + 4);
    const size = buf.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === "fmt ") {
      format = buf.readUInt16LE(body);
      channels = buf.readUInt16LE(body + 2);
      sampleRate = buf.readUInt32LE(body + 4);
      bits = buf.readUInt16LE(body + 14);
    } else if (id === "data") {
      if (format !== 1 && format !== 0xfffe) throw new Error(`${path}: not PCM (format ${format})`);
      if (bits !== 16) throw new Error(`${path}: ${bits}-bit, expected 16`);
      const frameBytes = channels * 2;
      const available = buf.length - body;
      const declared = size === UNKNOWN_SIZE || size > available ? available : size;
      const bytes = declared - (declared % frameBytes);
      // Copy: the data chunk may start at an odd offset, which an Int16Array view cannot.
      const pcm = Buffer.from(buf.subarray(body, body + bytes));
      const samples = new Int16Array(pcm.buffer, pcm.byteOffset, bytes / 2);
      const frames = bytes / frameBytes;
      return { sampleRate, channels, samples, frames, durationSec: frames / sampleRate };
    }
    // Chunks are padded to even sizes.
    offset = body + size + (size % 2);
  }
  throw new Error(`${path}: no data chunk`);
}

/** Decodes any audio ffmpeg reads (FLAC) to a PCM s16le WAV next to it; returns its path. */
export async function decodeToWav(inPath: string, outPath = `${inPath}.decoded.wav`): Promise<string> {
  await execFileAsync("ffmpeg", ["-hide_banner", "-loglevel", "error", "-y", "-i", inPath, "-c:a", "pcm_s16le", outPath]);
  return outPath;
}

/** One channel of interleaved samples as floats in [-1, 1). */
export function channel(wav: Wav, index: number): Float32Array {
  const out = new Float32Array(wav.frames);
  for (let i = 0; i < wav.frames; i++) out[i] = (wav.samples[i * wav.channels + index] ?? 0) / 32768;
  return out;
}

/** The 44-byte header of a PCM s16le WAV holding `dataBytes` of samples. */
export function wavHeader(sampleRate: number, channels: number, dataBytes: number): Buffer {
  const h = Buffer.alloc(44);
  h.write("RIFF", 0, "ascii");
  h.writeUInt32LE(36 + dataBytes, 4);
  h.write("WAVEfmt ", 8, "ascii");
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(channels, 22);
  h.writeUInt32LE(sampleRate, 24);
  h.writeUInt32LE(sampleRate * channels * 2, 28);
  h.writeUInt16LE(channels * 2, 32);
  h.writeUInt16LE(16, 34);
  h.write("data", 36, "ascii");
  h.writeUInt32LE(dataBytes, 40);
  return h;
}

/** A mono s16le WAV of a sine tone (amplitude 0.5) in memory, e.g. for a data: URL. */
export function toneWav(hz: number, seconds: number, sampleRate = 8000): Buffer {
  const frames = Math.round(seconds * sampleRate);
  const samples = Buffer.alloc(frames * 2);
  for (let i = 0; i < frames; i++) samples.writeInt16LE(Math.round(0.5 * 32767 * Math.sin((2 * Math.PI * hz * i) / sampleRate)), i * 2);
  return Buffer.concat([wavHeader(sampleRate, 1, samples.length), samples]);
}
