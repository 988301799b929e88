/**
 * The session's listening audio: per requested format one tap (capture.ts, a `parec` asking
 * PulseAudio for that rate and channel count) while anyone listens in it, cut into 20 ms frames
 * for every subscriber of that format. A format's tap stops when its last listener leaves, so an
 * unheard session costs nothing.
 */
import type { Logger } from "../../shared/log/logger.ts";
import { formatKey, frameBytes, type ListenFormat } from "../../shared/listen/protocol.ts";
import { startCapture, type Capture } from "./capture.ts";
import { PcmFramer } from "./framer.ts";

/** Receives the 20 ms frames one chunk of audio completed (often one, sometimes none or two). */
export type FrameHandler = (frames: Buffer[]) => void;

interface FormatStream {
  readonly subscribers: Set<FrameHandler>;
  readonly capture: Capture;
}

export interface FanoutOptions {
  pulseEnv: Record<string, string>;
  source: string;
  /** Each tap's PulseAudio fragment, ms (capture.ts: tapLatencyMs). */
  fragmentMs: number;
  logger: Logger;
  /** A tap died while listeners were attached (not stopped by us). */
  onFailure: (message: string) => void;
}

export class AudioFanout {
  readonly #options: FanoutOptions;
  readonly #streams = new Map<string, FormatStream>();
  #stopped = false;

  constructor(options: FanoutOptions) {
    this.#options = options;
  }

  /** The taps now running, one per format listened to (for the benchmark's CPU figures). */
  get pids(): { captures: number[] } {
    return { captures: [...this.#streams.values()].map((s) => s.capture.pid) };
  }

  /** Starts delivering frames of `format` to `handler`; returns the unsubscribe. */
  subscribe(format: ListenFormat, handler: FrameHandler): () => void {
    if (this.#stopped) return () => undefined;
    const key = formatKey(format);
    const stream = this.#streams.get(key) ?? this.#open(key, format);
    stream.subscribers.add(handler);
    return () => {
      stream.subscribers.delete(handler);
      if (stream.subscribers.size > 0 || this.#streams.get(key) !== stream) return;
      this.#streams.delete(key);
      void stream.capture.stop();
    };
  }

  /** Stops every tap; later subscriptions get nothing. Idempotent. */
  async stop(): Promise<void> {
    this.#stopped = true;
    const streams = [...this.#streams.values()];
    this.#streams.clear();
    await Promise.all(streams.map((s) => s.capture.stop()));
  }

  #open(key: string, format: ListenFormat): FormatStream {
    const { logger } = this.#options;
    const framer = new PcmFramer(frameBytes(format));
    const subscribers = new Set<FrameHandler>();
    const capture = startCapture({
      pulseEnv: this.#options.pulseEnv,
      source: this.#options.source,
      fragmentMs: this.#options.fragmentMs,
      format,
      logger,
      onChunk: (chunk) => {
        const frames = framer.push(chunk);
        if (frames.length > 0) for (const s of subscribers) s(frames);
      },
    });
    const stream: FormatStream = { subscribers, capture };
    this.#streams.set(key, stream);
    logger.debug({ pid: capture.pid, format: key }, "listen tap started");
    void capture.exited.then((exit) => {
      if (this.#streams.get(key) === stream) this.#streams.delete(key);
      if (!exit.expected && !this.#stopped) {
        logger.warn({ code: exit.code, signal: exit.signal, format: key }, "listen tap exited unexpectedly");
        this.#options.onFailure("the audio tap stopped");
      }
    });
    return stream;
  }
}
