/**
 * The session's listening taps: one `parec` (capture.ts) per audio stream the control plane
 * opens, writing into that stream's socket; the control plane opens one per format listened to
 * and fans it out, and closes it when the format's last listener leaves, which ends the tap
 * (EPIPE). So an unheard session costs nothing, and the worker never touches the audio.
 */
import type { Socket } from "node:net";
import type { Logger } from "../../shared/log/logger.ts";
import { formatKey, type ListenFormat } from "../../shared/listen/protocol.ts";
import { startCapture, type Capture } from "./capture.ts";

export interface TapsOptions {
  pulseEnv: Record<string, string>;
  source: string;
  /** Each tap's PulseAudio fragment, ms (capture.ts: tapLatencyMs). */
  fragmentMs: number;
  logger: Logger;
  /** A tap died while its reader was still there (not stopped by us). */
  onFailure: (message: string) => void;
}

export class AudioTaps {
  readonly #options: TapsOptions;
  readonly #captures = new Set<Capture>();
  #stopped = false;

  constructor(options: TapsOptions) {
    this.#options = options;
  }

  /** The taps now running (for the benchmark's CPU figures). */
  get pids(): { captures: number[] } {
    return { captures: [...this.#captures].map((c) => c.pid) };
  }

  /** Starts a tap of `format` writing into `output`; after stop(), the socket is only closed. */
  open(format: ListenFormat, output: Socket): void {
    const { logger } = this.#options;
    // A reader already gone (it left before its hello was answered) is no failure: nothing to do.
    if (this.#stopped || output.destroyed) {
      output.destroy();
      return;
    }
    let capture: Capture;
    try {
      capture = startCapture({ pulseEnv: this.#options.pulseEnv, source: this.#options.source, fragmentMs: this.#options.fragmentMs, format, logger, output });
    } catch (err) {
      output.destroy();
      logger.error({ err, format: formatKey(format) }, "listen tap did not start");
      this.#options.onFailure("the audio tap did not start");
      return;
    }
    this.#captures.add(capture);
    logger.debug({ pid: capture.pid, format: formatKey(format) }, "listen tap started");
    void capture.exited.then((exit) => {
      this.#captures.delete(capture);
      if (exit.expected || exit.readerGone || this.#stopped) return;
      logger.warn({ code: exit.code, signal: exit.signal, format: formatKey(format) }, "listen tap exited unexpectedly");
      this.#options.onFailure("the audio tap stopped");
    });
  }

  /** Stops every tap (their readers see the end of the stream); later opens get nothing. Idempotent. */
  async stop(): Promise<void> {
    this.#stopped = true;
    const captures = [...this.#captures];
    this.#captures.clear();
    await Promise.all(captures.map((c) => c.stop()));
  }
}
