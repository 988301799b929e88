/**
 * The player of an open live stream, started when the stream is opened rather than when its first
 * ingest connects: ffmpeg needs 0.1-2 s to start and connect to pulse (media-pipeline.md), which
 * the first bytes of a stream would otherwise wait for. One spare at a time: an ingest takes it,
 * and a new one is started once that ingest's player has ended.
 */
import type { Logger } from "../../shared/log/logger.ts";
import type { RawFormat } from "./ops.ts";
import { silence } from "./pcm.ts";
import { startPlayer, type Player } from "./player.ts";

/**
 * ffmpeg connects its pulse output only once its first packets went through, and its raw PCM
 * demuxer reads packets of 1024 samples (RAW_SAMPLES). Measured with ffmpeg 5.1: two packets of
 * silence open the output within ~0.3 s; one packet, or 1.5, left it waiting for more input.
 * A container (format null) needs its header first, so that player opens with the ingest.
 */
const PRIMER_SAMPLES = 2 * 1024;

export function startStreamPlayer(format: RawFormat | null, pulseEnv: Record<string, string>, logger: Logger): Player {
  const player = startPlayer({ source: { kind: "stdin", rawFormat: format }, volume: 1, pulseEnv, logger });
  // An ffmpeg that died already makes stdin fail with EPIPE; its exit is handled through `ended`.
  player.input?.on("error", () => undefined);
  if (format) player.input?.write(silence(format, PRIMER_SAMPLES));
  return player;
}

/** Holds the pre-started player of an open stream until an ingest takes it. */
export class SparePlayer {
  #player: Player | null = null;
  #ended = false;
  readonly #start: () => Player;

  constructor(start: () => Player) {
    this.#start = start;
  }

  /** Starts a spare unless one is waiting. */
  arm(): void {
    if (this.#player && !this.#ended) return;
    const player = this.#start();
    this.#player = player;
    this.#ended = false;
    void player.ended.then(() => {
      if (this.#player === player) this.#ended = true;
    });
  }

  /** The waiting spare (started now if there is none or it died); the holder is empty after. */
  take(): Player {
    const player = this.#player && !this.#ended ? this.#player : this.#start();
    this.#player = null;
    return player;
  }

  /** Stops a spare that no ingest took. */
  async stop(): Promise<void> {
    const player = this.#player;
    this.#player = null;
    await player?.stop();
  }
}
