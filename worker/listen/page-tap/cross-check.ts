/**
 * The page tap's safety net. The page tap hears what page-script.ts knows the page plays; a page
 * can play in ways its hooks do not see (a media element started by its `autoplay` attribute
 * inside a shadow root, whose events never reach the document), and listeners would then hear
 * silence while the recording hears the meeting. The recording's sink hears everything: while
 * the page tap serves, the sink's level (sink-level.ts) is compared with the page tap's mix, and
 * when the sink has been audible for a second of the last two while the mix has been silent for
 * four (the sink hears the page 0.3-0.5 s later), the page tap gives up and every listener moves
 * to the sink (../taps.ts), as when the page says it plays what its tap cannot read.
 *
 * A mix that holds sound misses nothing this check could see, so the sink is listened to (a parec
 * and a PulseAudio record stream: ~0.4 % of a core, a third of what a listener costs) only once
 * the mix has been silent for LISTEN_AFTER_SILENT_MS, and then for KEEP_LISTENING_MS at least, so
 * that a conversation's pauses do not start and stop a process each time.
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
/** Silence of the mix after which the sink is listened to: by PAGE_SILENT_MS its window is full. */
export const LISTEN_AFTER_SILENT_MS = PAGE_SILENT_MS - SINK_WINDOW_MS - 500;
/** Once listened to, the sink is listened to this long at least. */
const KEEP_LISTENING_MS = 30_000;

export const MISSED_AUDIO = "the recording hears audio the page tap does not";

/** Whether the sink hears what the page tap missed (all times on performance.now()'s clock). */
export function pageTapMisses(o: { now: number; servingSince: number; pageAudibleAt: number; sink: readonly LevelBlock[] }): boolean {
  if (o.now - Math.max(o.servingSince, o.pageAudibleAt) < PAGE_SILENT_MS) return false;
  const audibleBlocks = o.sink.filter((b) => b.at > o.now - SINK_WINDOW_MS && b.dbfs >= AUDIBLE_DBFS).length;
  return audibleBlocks * LEVEL_BLOCK_MS >= SINK_AUDIBLE_MS;
}

export interface CrossCheck {
  /** The sink's parec now, or null while the mix holds sound. */
  readonly pid: number | null;
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
  let level: SinkLevel | null = null;
  let listeningSince = 0;
  const listen = (now: number) => {
    try {
      level = startSinkLevel({ ...options, stream: "listen-check" });
      listeningSince = now;
    } catch (err) {
      // Tried again at the next check: a parec that cannot start now may later.
      options.logger.warn({ err }, "listen: the page tap's check could not listen to the sink");
    }
  };
  const check = () => {
    const now = performance.now();
    const pageAudibleAt = options.pageAudibleAt();
    const silentFor = now - Math.max(servingSince, pageAudibleAt);
    if (!level) {
      if (silentFor >= LISTEN_AFTER_SILENT_MS) listen(now);
      return;
    }
    if (silentFor < LISTEN_AFTER_SILENT_MS && now - listeningSince >= KEEP_LISTENING_MS) {
      void level.stop();
      level = null;
      return;
    }
    if (!pageTapMisses({ now, servingSince, pageAudibleAt, sink: level.blocksWithin(SINK_WINDOW_MS, now) })) return;
    clearInterval(timer);
    options.logger.warn("listen: the recording hears audio the page tap does not; listeners hear the sink");
    options.onMiss(MISSED_AUDIO);
  };
  const timer = setInterval(check, CHECK_EVERY_MS);
  timer.unref();
  return {
    get pid() {
      return level?.pid ?? null;
    },
    async stop() {
      clearInterval(timer);
      await level?.stop();
      level = null;
    },
  };
}
