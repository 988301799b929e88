/**
 * One ffmpeg that plays audio into the virtual microphone (the `mic` sink), from a file or from
 * its stdin. No `-re`: the pulse output blocks at the sink's real-time pace, which is also what
 * makes a live stream push back on its producer (ffmpeg stops reading stdin when pulse is full).
 */
import type { Writable } from "node:stream";
import type { Logger } from "../../shared/log/logger.ts";
import { spawnChild, type Child, type ChildExit } from "../../shared/process/child.ts";
import { MIC_SINK } from "../audio/pulse.ts";

/**
 * Pulse's own default target length is ~2 s, which would delay every sound by that much and keep
 * 2 s of audio playing after a stop. A file keeps 60 ms: room for a busy 2-core box to schedule
 * ffmpeg without underruns, and its latency matters little.
 */
const FILE_BUFFER_MS = 60;
/**
 * A live stream: 30 ms of target buffer, and playback (re)starts once 20 ms are queued instead of
 * the whole target. Pulse waits for that pre-buffer again after every underrun, so on a loaded box
 * each underrun added the wait to all later audio: bench/mic.ts with two busy loops on the 2 cores
 * measured onset latency 196 ms with 60/60, 149 ms and creeping up to 232 with 30/30, a steady
 * 127 ms with 30/20; idle box 115, 101, 106 ms. No dropouts in any of them.
 */
const LIVE_BUFFER_MS = 30;
const LIVE_PREBUF_MS = 20;
/** What ffmpeg writes into pulse: s16le mono at 48 kHz (the output options below). */
const PULSE_BYTES_PER_MS = 96;
/** ffmpeg answers SIGTERM within milliseconds; a wedged one is killed with its group. */
const STOP_TIMEOUT_MS = 2_000;
/** How long a file play waits for ffmpeg to open input and pulse before it answers. */
const OPEN_TIMEOUT_MS = 10_000;

export type PlayerSource =
  | { kind: "file"; path: string; loop: boolean }
  /** `rawFormat` for headerless PCM at 48 kHz mono; null lets ffmpeg detect mp3/ogg/wav/webm. */
  | { kind: "stdin"; rawFormat: string | null };

export interface PlayerOptions {
  source: PlayerSource;
  volume: number;
  pulseEnv: Record<string, string>;
  logger: Logger;
}

export interface Player {
  readonly pid: number;
  /** ffmpeg's stdin for a `stdin` source; null for a file. */
  readonly input: Writable | null;
  /** Resolves when ffmpeg exits, with whether it ended by itself (end of input) or by stop(). */
  readonly ended: Promise<{ exit: ChildExit; stopped: boolean }>;
  /** Resolves once ffmpeg has opened its input and the pulse output; rejects if it exits first. */
  readonly opened: Promise<void>;
  stop(): Promise<void>;
}

export class PlayerFailure extends Error {}

/** ffmpeg's description of an input's audio stream: `  Stream #0:0(und): Audio: aac ...`. */
const AUDIO_STREAM = /^\s*Stream #\d+:\d+.*?: Audio: /;

function inputArgs(source: PlayerSource): string[] {
  if (source.kind === "file") {
    return ["-nostdin", ...(source.loop ? ["-stream_loop", "-1"] : []), "-i", source.path];
  }
  // A small probe: the default (5 MB / 5 s of analysis) would hold back the start of a live
  // stream by seconds; mp3, ogg, wav and webm headers are recognised in the first kilobytes.
  // Raw PCM needs no probe at all: with the default, ffmpeg read until end of input before it
  // opened its output when fed only a little (measured: 2 packets of silence, output at EOF).
  const probe = ["-probesize", source.rawFormat ? "32" : "32768", "-analyzeduration", "0"];
  const format = source.rawFormat ? ["-f", source.rawFormat, "-ar", "48000", "-ac", "1"] : [];
  // `nobuffer` throws away the packets read while the input is analysed. For raw PCM that is the
  // primer's 32 bytes of silence; for a container it was the start of what the producer said
  // (0.4 s of a 48 kHz WAV, 1-2 s of an mp3: its 32 kB probe), so a container keeps them.
  return [...(source.rawFormat ? ["-fflags", "nobuffer"] : []), ...probe, ...format, "-i", "pipe:0"];
}

export function startPlayer(options: PlayerOptions): Player {
  const { source, volume, pulseEnv, logger } = options;
  let markOpened: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => (markOpened = resolve));
  let sawAudio = false;
  const args = [
    "-hide_banner",
    "-nostats",
    "-loglevel",
    "info",
    ...inputArgs(source),
    "-vn",
    "-af",
    `volume=${volume.toFixed(3)}`,
    "-ac",
    "1",
    "-ar",
    "48000",
    "-f",
    "pulse",
    ...(source.kind === "file"
      ? ["-buffer_duration", String(FILE_BUFFER_MS)]
      : ["-buffer_duration", String(LIVE_BUFFER_MS), "-prebuf", String(LIVE_PREBUF_MS * PULSE_BYTES_PER_MS)]),
    "-device",
    MIC_SINK,
    "bot-playback",
  ];
  const child: Child = spawnChild({
    command: "ffmpeg",
    args,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...pulseEnv },
    logger,
    name: "ffmpeg-playback",
    // The player leads its own group and would outlive a worker that exits without close().
    killOnParentExit: true,
    stdin: source.kind === "stdin" ? "pipe" : "ignore",
    // "Output #0" is printed once the pulse stream is connected: playback has started, if the
    // input had audio. A picture or a silent video opens the output too, then ffmpeg exits with
    // "Output file #0 does not contain any stream": that is a file that is not audio, not "playing".
    onStderrLine: (line) => {
      if (AUDIO_STREAM.test(line)) sawAudio = true;
      else if (line.startsWith("Output #0") && sawAudio) markOpened();
    },
  });
  let stopped = false;
  const ended = child.exited.then((exit) => ({ exit, stopped }));
  const openedOrFailed = Promise.race([
    opened,
    child.exited.then(async (exit) => {
      throw new PlayerFailure(`ffmpeg could not play the audio (exit ${exit.code ?? exit.signal}): ${(await child.finalStderrTail()).slice(-2).join(" | ")}`);
    }),
    new Promise<void>((resolve) => setTimeout(resolve, OPEN_TIMEOUT_MS).unref()),
  ]);
  // Callers that never await it must not get an unhandled rejection.
  openedOrFailed.catch(() => undefined);
  return {
    pid: child.pid,
    input: child.process.stdin ?? null,
    ended,
    opened: openedOrFailed,
    async stop() {
      stopped = true;
      child.process.stdin?.destroy();
      await child.stop({ signal: "SIGTERM", timeoutMs: STOP_TIMEOUT_MS });
    },
  };
}
