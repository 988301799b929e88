/**
 * The session's listening audio: one tap (capture.ts) while anyone listens, and per requested
 * format one stream of 20 ms frames to every subscriber of that format. The tap's own format
 * (48 kHz stereo) is framed directly; every other format goes through one shared resampler.
 * Everything stops again when the last listener leaves, so an unheard session costs nothing.
 */
import type { Logger } from "../../shared/log/logger.ts";
import { SOURCE_CHANNELS, SOURCE_RATE, formatKey, frameBytes, type ListenFormat } from "../../shared/listen/protocol.ts";
import { startCapture, type Capture } from "./capture.ts";
import { PcmFramer } from "./framer.ts";
import { startResampler, type Resampler } from "./resampler.ts";

/** Receives the 20 ms frames one chunk of audio completed (often one, sometimes none or two). */
export type FrameHandler = (frames: Buffer[]) => void;

interface FormatStream {
  readonly format: ListenFormat;
  readonly framer: PcmFramer;
  readonly subscribers: Set<FrameHandler>;
  /** Null for the tap's own format. */
  readonly resampler: Resampler | null;
}

export interface FanoutOptions {
  pulseEnv: Record<string, string>;
  source: string;
  logger: Logger;
  /** The tap died while listeners were attached (not stopped by us). */
  onFailure: (message: string) => void;
}

const isSourceFormat = (f: ListenFormat): boolean => f.sampleRate === SOURCE_RATE && f.channels === SOURCE_CHANNELS;

export class AudioFanout {
  readonly #options: FanoutOptions;
  readonly #streams = new Map<string, FormatStream>();
  #capture: Capture | null = null;
  #stopped = false;

  constructor(options: FanoutOptions) {
    this.#options = options;
  }

  /** The processes now running for listeners (for the benchmark's CPU figures). */
  get pids(): { capture: number | null; resamplers: number[] } {
    return {
      capture: this.#capture?.pid ?? null,
      resamplers: [...this.#streams.values()].flatMap((s) => (s.resampler ? [s.resampler.pid] : [])),
    };
  }

  /** Starts delivering frames of `format` to `handler`; returns the unsubscribe. */
  subscribe(format: ListenFormat, handler: FrameHandler): () => void {
    if (this.#stopped) return () => undefined;
    const key = formatKey(format);
    let stream = this.#streams.get(key);
    if (!stream) {
      const framer = new PcmFramer(frameBytes(format));
      const subscribers = new Set<FrameHandler>();
      const deliver = (chunk: Buffer) => {
        const frames = framer.push(chunk);
        if (frames.length > 0) for (const s of subscribers) s(frames);
      };
      const resampler = isSourceFormat(format) ? null : startResampler(format, this.#options.logger, deliver);
      stream = { format, framer, subscribers, resampler };
      this.#streams.set(key, stream);
    }
    stream.subscribers.add(handler);
    this.#ensureCapture();
    const owned = stream;
    return () => {
      owned.subscribers.delete(handler);
      if (owned.subscribers.size > 0 || this.#streams.get(key) !== owned) return;
      this.#streams.delete(key);
      void owned.resampler?.stop();
      if (this.#streams.size === 0) void this.#stopCapture();
    };
  }

  /** Stops the tap and every resampler; later subscriptions get nothing. Idempotent. */
  async stop(): Promise<void> {
    this.#stopped = true;
    const streams = [...this.#streams.values()];
    this.#streams.clear();
    await Promise.all([this.#stopCapture(), ...streams.map((s) => s.resampler?.stop())]);
  }

  #ensureCapture(): void {
    if (this.#capture) return;
    const capture = startCapture({
      pulseEnv: this.#options.pulseEnv,
      source: this.#options.source,
      logger: this.#options.logger,
      onChunk: (chunk) => this.#onChunk(chunk),
    });
    this.#capture = capture;
    this.#options.logger.debug({ pid: capture.pid }, "listen tap started");
    void capture.exited.then((exit) => {
      if (this.#capture === capture) this.#capture = null;
      if (!exit.expected && !this.#stopped) {
        this.#options.logger.warn({ code: exit.code, signal: exit.signal }, "listen tap exited unexpectedly");
        this.#options.onFailure("the audio tap stopped");
      }
    });
  }

  async #stopCapture(): Promise<void> {
    const capture = this.#capture;
    this.#capture = null;
    await capture?.stop();
  }

  #onChunk(chunk: Buffer): void {
    for (const stream of this.#streams.values()) {
      if (stream.resampler) stream.resampler.write(chunk);
      else {
        const frames = stream.framer.push(chunk);
        if (frames.length > 0) for (const s of stream.subscribers) s(frames);
      }
    }
  }
}
