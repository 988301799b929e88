/**
 * The page tap's safety net. The page tap hears what page-script.ts knows the page plays; a page
 * can play in ways its hooks do not see (a media element started by its `autoplay` attribute
 * inside a shadow root, whose events never reach the document), and listeners would then hear
 * silence while the recording hears the meeting. The recording's sink hears everything: while
 * the page tap serves, the sink's level (sink-level.ts) is compared with the page tap's mix, and
 * when the sink has been audible for a second of the last two while the mix has been silent for
 * four (the sink hears the page 0.3-0.5 s later), the page tap gives up and every listener moves
 * to the sink (../taps.ts), as when the page says it plays what its tap cannot read.
 */
import type { Logger } from "../../../shared/log/logger.ts";
import { LEVEL_BLOCK_MS, startSinkLevel, type LevelBlock, type SinkLevel } from "../../audio/sink-level.ts";

/** Louder than this is sound, in the sink's blocks (RMS) as in the mix (peak); WebRTC's comfort noise is far below. */
export const AUDIBLE_DBFS = -50;
export const AUDIBLE_AMPLITUDE = 10 ** (AUDIBLE_DBFS / 20);
const SINK_WINDOW_MS = 2_000;
const SINK_AUDIBLE_MS = 1_000;
const PAGE_SILENT_MS = 4_000;
const CHECK_EVERY_MS = 500;

export const MISSED_AUDIO = "the recording hears audio the page tap does not";

/** Whether the sink hears what the page tap missed (all times on performance.now()'s clock). */
export function pageTapMisses(o: { now: number; servingSince: number; pageAudibleAt: number; sink: readonly LevelBlock[] }): boolean {
  if (o.now - Math.max(o.servingSince, o.pageAudibleAt) < PAGE_SILENT_MS) return false;
  const audibleBlocks = o.sink.filter((b) => b.at > o.now - SINK_WINDOW_MS && b.dbfs >= AUDIBLE_DBFS).length;
  return audibleBlocks * LEVEL_BLOCK_MS >= SINK_AUDIBLE_MS;
}

export interface CrossCheck {
  readonly pid: number;
  stop(): Promise<void>;
}

export interface CrossCheckOptions {
  pulseEnv: Record<string, string>;
  source: string;
  logger: Logger;
  /** When the page tap's mix was last audible (performance.now()), or -Infinity. */
  pageAudibleAt: () => number;
  /** Called once, when the page tap misses what the sink hears. */
  onMiss: (why: string) => void;
}

/** Checks the page tap against the sink from now on (it starts serving), until stopped. */
export function startCrossCheck(options: CrossCheckOptions): CrossCheck {
  const servingSince = performance.now();
  const level: SinkLevel = startSinkLevel({ ...options, stream: "listen-check" });
  const timer = setInterval(() => {
    const now = performance.now();
    if (!pageTapMisses({ now, servingSince, pageAudibleAt: options.pageAudibleAt(), sink: level.blocksWithin(SINK_WINDOW_MS, now) })) return;
    clearInterval(timer);
    options.logger.warn("listen: the recording hears audio the page tap does not; listeners hear the sink");
    options.onMiss(MISSED_AUDIO);
  }, CHECK_EVERY_MS);
  timer.unref();
  return {
    pid: level.pid,
    async stop() {
      clearInterval(timer);
      await level.stop();
    },
  };
}
