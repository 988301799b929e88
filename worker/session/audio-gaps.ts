import type { FromWorker } from "../../shared/ipc/messages.ts";
import type { Logger } from "../../shared/log/logger.ts";
import type { AudioGap, GapDetector } from "../audio/gaps.ts";

/** A burst ends after this long without a gap: one SIGSTOP-like stall comes as one long gap and a few short ones. */
const BURST_QUIET_MS = 2_000;
/** At most one warn line this often, however the gaps come: a starved box must not flood the log. */
const MIN_LINE_INTERVAL_MS = 30_000;

export interface AudioGapReport {
  /** Stops reporting and writes the pending burst's line; idempotent. */
  stop(): void;
}

export interface AudioGapOptions {
  gaps: GapDetector;
  send: (message: FromWorker) => Promise<boolean>;
  /** The session's logger (it carries session_id). */
  logger: Logger;
}

/**
 * While the bot is in the call: every gap the detector finds (worker/audio/gaps.ts) goes to the
 * supervisor as an `audioGap` message (it counts them in /metrics), and each burst of gaps gets one
 * warn line with how many, how much audio was lost and the longest, so an operator finds the
 * session and the moment. Lines are at least MIN_LINE_INTERVAL_MS apart; gaps in between add up
 * into the next one. Nothing but counts and durations is logged.
 */
export function reportAudioGaps(options: AudioGapOptions): AudioGapReport {
  const { logger } = options;
  let burst: { gaps: number; lostSec: number; longestSec: number; firstAt: number } | null = null;
  let lastLineAt = -Infinity;
  let timer: NodeJS.Timeout | undefined;

  const writeLine = (): void => {
    clearTimeout(timer);
    timer = undefined;
    if (!burst) return;
    const { gaps, lostSec, longestSec, firstAt } = burst;
    burst = null;
    lastLineAt = performance.now();
    logger.warn(
      { audio_gaps: gaps, lost_ms: Math.round(lostSec * 1000), longest_ms: Math.round(longestSec * 1000), first_gap_at: new Date(Date.now() - (performance.now() - firstAt)).toISOString() },
      "the recording lost meeting audio: the browser's playback stream under-ran (the worker was short of CPU)",
    );
  };

  const onGap = (gap: AudioGap): void => {
    const startedAt = gap.endedAt - gap.seconds * 1000;
    void options.send({ type: "audioGap", seconds: gap.seconds, at: new Date(Date.now() - (performance.now() - startedAt)).toISOString() });
    burst ??= { gaps: 0, lostSec: 0, longestSec: 0, firstAt: startedAt };
    burst.gaps += 1;
    burst.lostSec += gap.seconds;
    burst.longestSec = Math.max(burst.longestSec, gap.seconds);
    const now = performance.now();
    // Quiet for BURST_QUIET_MS, but never sooner than the interval allows, nor later than it
    // allows after the burst began (a box starved for minutes still gets a line now and then).
    const due = Math.min(Math.max(now + BURST_QUIET_MS, lastLineAt + MIN_LINE_INTERVAL_MS), Math.max(burst.firstAt, lastLineAt) + MIN_LINE_INTERVAL_MS);
    clearTimeout(timer);
    timer = setTimeout(writeLine, Math.max(0, due - now));
    timer.unref();
  };

  const unsubscribe = options.gaps.onGap(onGap);
  let stopped = false;
  return {
    stop() {
      if (stopped) return;
      stopped = true;
      unsubscribe();
      writeLine();
    },
  };
}
