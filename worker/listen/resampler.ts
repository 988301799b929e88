/**
 * One listening format other than the tap's own (48 kHz stereo): an ffmpeg that reads the tap's
 * PCM on stdin and writes the format on stdout, through libswresample's own polyphase resampler
 * (a windowed-sinc, band-limited, anti-aliased conversion; not sample dropping). Every listener of
 * the same rate and channel count shares it. Stereo to mono is ffmpeg's downmix (L and R at
 * -3 dB each).
 *
 * Not the SoX resampler (`resampler=soxr`): it works in blocks and held each 20 ms tap chunk
 * until the next one came, 21 ms median in isolation (48 kHz stereo fed in real time, 20 ms
 * chunks) and 33-36 ms median, p95 47-56 ms, of the meeting-to-listener latency (bench-listen,
 * 16 kHz listener against a 48 kHz one, load 2); swr answers each chunk at once (0.3 ms median
 * in isolation). Its default filter (32 taps per phase, cutoff 0.97 of the output's Nyquist)
 * left nothing of a 6 kHz tone resampled to 8 kHz (below -180 dBFS; soxr: -97 dBFS).
 */
import type { Writable } from "node:stream";
import type { Logger } from "../../shared/log/logger.ts";
import { SOURCE_CHANNELS, SOURCE_RATE, type ListenFormat } from "../../shared/listen/protocol.ts";
import { spawnChild, type Child } from "../../shared/process/child.ts";
import { killProcessGroup } from "../../shared/process/group.ts";

const STOP_TIMEOUT_MS = 2_000;
/**
 * What may wait in front of the resampler (node's buffer above the 64 KB pipe) before chunks
 * are skipped: a second of tap audio. It only fills while ffmpeg starts or a loaded box holds it
 * back; a resampler that stays behind this long is broken, and the tap must not grow for it.
 */
const MAX_PENDING_BYTES = SOURCE_RATE * SOURCE_CHANNELS * 2;

export interface Resampler {
  readonly pid: number;
  /** Feeds tap audio; skipped (counted) while too much waits in front of ffmpeg. */
  write(chunk: Buffer): void;
  readonly skippedBytes: number;
  /** Resolves when ffmpeg exits. */
  readonly exited: Promise<void>;
  stop(): Promise<void>;
}

export function startResampler(format: ListenFormat, logger: Logger, onData: (chunk: Buffer) => void): Resampler {
  const child: Child = spawnChild({
    command: "ffmpeg",
    args: [
      "-hide_banner",
      "-nostats",
      "-loglevel",
      "warning",
      // Raw PCM needs no probing; the default analysis would hold the first audio back.
      "-fflags",
      "nobuffer",
      "-probesize",
      "32",
      "-analyzeduration",
      "0",
      "-f",
      "s16le",
      "-ar",
      String(SOURCE_RATE),
      "-ac",
      String(SOURCE_CHANNELS),
      "-i",
      "pipe:0",
      "-af",
      "aresample=resampler=swr",
      "-ar",
      String(format.sampleRate),
      "-ac",
      String(format.channels),
      "-f",
      "s16le",
      // Each packet leaves at once instead of waiting in the muxer's output buffer.
      "-flush_packets",
      "1",
      "pipe:1",
    ],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    logger,
    name: "ffmpeg-listen",
    stdin: "pipe",
    binaryStdout: true,
  });
  child.process.stdout?.on("data", onData);
  const input: Writable | null = child.process.stdin;
  input?.on("error", () => undefined);
  const killOnExit = () => killProcessGroup(child.pid);
  process.once("exit", killOnExit);
  const exited = child.exited.then(() => {
    process.removeListener("exit", killOnExit);
  });
  let skippedBytes = 0;
  return {
    pid: child.pid,
    get skippedBytes() {
      return skippedBytes;
    },
    write(chunk) {
      if (!input || input.destroyed || child.hasExited) return;
      if (input.writableLength > MAX_PENDING_BYTES) {
        if (skippedBytes === 0) logger.warn({ pid: child.pid }, "listen resampler is a second behind; skipping tap audio for it");
        skippedBytes += chunk.length;
        return;
      }
      input.write(chunk);
    },
    exited,
    async stop() {
      input?.destroy();
      await child.stop({ signal: "SIGTERM", timeoutMs: STOP_TIMEOUT_MS });
    },
  };
}
