/**
 * The session's listening taps. The control plane opens one audio stream per format listened to
 * and fans it out, and closes it when the format's last listener leaves. Each stream is served by
 * the page tap (page-tap/tap.ts: what the page plays, before the browser's PulseAudio buffer)
 * when the page has one and it hears everything the page plays; otherwise by a `parec` on the
 * recording's sink (capture.ts) writing straight into the stream's socket, which the tap's end
 * (EPIPE) stops. Should the page start playing something its tap cannot read, every stream moves
 * to the sink; so should the sink hear sound while the page tap hears none (page-tap/cross-check.ts).
 * An unheard session costs nothing either way.
 */
import type { Socket } from "node:net";
import type { Logger } from "../../shared/log/logger.ts";
import { formatKey, type ListenFormat } from "../../shared/listen/protocol.ts";
import { startCapture, type Capture } from "./capture.ts";
import { startCrossCheck, type CrossCheck } from "./page-tap/cross-check.ts";
import type { PageTap } from "./page-tap/tap.ts";
import { paceMs, startSinkPacer, type SinkPacer } from "./sink-pacer.ts";

export interface TapsOptions {
  pulseEnv: Record<string, string>;
  source: string;
  /** Each tap's PulseAudio fragment, ms (capture.ts: tapLatencyMs). */
  fragmentMs: number;
  logger: Logger;
  /** A tap died while its reader was still there (not stopped by us). */
  onFailure: (message: string) => void;
  /** The sink's block while the page tap serves nobody (LISTEN_LOW_LATENCY: sink-pacer.ts, IDLE_PACE_MS); unpaced when absent. */
  idlePaceMs?: number;
}

export class AudioTaps {
  readonly #options: TapsOptions;
  readonly #captures = new Set<Capture>();
  #stopped = false;
  #pageTap: PageTap | null = null;
  #pacer: SinkPacer | null = null;
  #check: CrossCheck | null = null;

  constructor(options: TapsOptions) {
    this.#options = options;
  }

  /** From now on streams go to `tap` while it can serve them (the sink paced at idlePaceMs meanwhile). */
  usePageTap(tap: PageTap): void {
    this.#pageTap = tap;
    this.#pace(this.#options.idlePaceMs ?? null);
  }

  /**
   * The page tap reads tracks in the page (true) or not (false: nobody listens, or every source
   * comes by the encoded path): while it does, the sink is paced, so that the browser pulls its
   * audio in short pieces.
   */
  pageTapReading(reading: boolean): void {
    this.#pace(reading ? paceMs() : (this.#options.idlePaceMs ?? null));
  }

  /** The page tap started (true) or stopped (false) serving listeners: its check against the sink runs meanwhile. */
  pageTapActive(active: boolean): void {
    void this.#check?.stop();
    this.#check = null;
    const tap = this.#pageTap;
    if (!active || !tap || this.#stopped) return;
    try {
      const { pulseEnv, source, logger } = this.#options;
      this.#check = startCrossCheck({ pulseEnv, source, logger, pageAudibleAt: () => tap.lastAudibleAt, onMiss: (why) => tap.giveUp(why) });
    } catch (err) {
      this.#options.logger.warn({ err }, "listen: the page tap's check against the sink did not start");
    }
  }

  /** Has the sink paced at `ms` (null: not at all): the new pacer starts before the old one stops. */
  #pace(ms: number | null): void {
    if (this.#stopped || (this.#pacer?.fragmentMs ?? null) === ms) return;
    const old = this.#pacer;
    this.#pacer = null;
    if (ms !== null) {
      try {
        this.#pacer = startSinkPacer({ pulseEnv: this.#options.pulseEnv, source: this.#options.source, logger: this.#options.logger, fragmentMs: ms });
      } catch (err) {
        this.#options.logger.warn({ err }, "listen: the sink pacer did not start (the page is heard in bursts)");
      }
    }
    void old?.stop();
  }

  /** The page tap cannot hear everything any more: its streams go to the sink's taps. */
  fallBackToSink(): void {
    const tap = this.#pageTap;
    if (!tap) return;
    for (const { format, socket } of tap.takeOutputs()) this.#openCapture(format, socket);
  }

  /** The taps now running (for the benchmark's CPU figures). */
  get pids(): { captures: number[] } {
    const pids = [...this.#captures, this.#pacer, this.#check].map((c) => c?.pid);
    return { captures: pids.filter((pid): pid is number => typeof pid === "number") };
  }

  /** Starts a tap of `format` writing into `output`; after stop(), the socket is only closed. */
  open(format: ListenFormat, output: Socket): void {
    // A reader already gone (it left before its hello was answered) is no failure: nothing to do.
    if (this.#stopped || output.destroyed) {
      output.destroy();
      return;
    }
    if (this.#pageTap?.open(format, output)) return;
    this.#openCapture(format, output);
  }

  #openCapture(format: ListenFormat, output: Socket): void {
    const { logger } = this.#options;
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
    await this.#pageTap?.stop();
    await this.#pacer?.stop();
    this.#pacer = null;
    await this.#check?.stop();
    this.#check = null;
    const captures = [...this.#captures];
    this.#captures.clear();
    await Promise.all(captures.map((c) => c.stop()));
  }
}
