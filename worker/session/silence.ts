import { SILENCE_DBFS } from "../../shared/session/automatic-leave.ts";
import type { Logger } from "../../shared/log/logger.ts";
import { LEVEL_BLOCK_MS, startSinkLevel } from "../audio/sink-level.ts";

export interface SilenceWatch {
  stop(): void;
}

export interface SilenceOptions {
  pulseEnv: Record<string, string>;
  /** The recording sink's monitor: what a participant hears (also with `record` false). */
  source: string;
  logger: Logger;
  /** automatic_leave.silence_minutes in ms. */
  silenceMs: number;
  /** Silence counts from this instant on (admission + silence_activate_after_minutes). */
  activeFrom: number;
  /** Called once when the meeting has been silent for `silenceMs`. */
  onSilence: () => void;
}

/**
 * Measures the meeting's audio (the RMS of the sink's monitor in 250 ms blocks: ../audio/sink-level.ts)
 * and calls `onSilence` after `silenceMs` of blocks in a row below -60 dBFS (issue #16, end_reason `silence`).
 */
export function watchSilence(options: SilenceOptions): SilenceWatch {
  const { logger } = options;
  let quietSince: number | null = null;
  let fired = false;
  let level: ReturnType<typeof startSinkLevel> | null = null;
  try {
    level = startSinkLevel({
      pulseEnv: options.pulseEnv,
      source: options.source,
      logger,
      stream: "silence",
      onBlock: ({ at, dbfs }) => {
        if (dbfs >= SILENCE_DBFS || at < options.activeFrom) {
          quietSince = null;
          return;
        }
        quietSince ??= at - LEVEL_BLOCK_MS;
        if (!fired && at - quietSince >= options.silenceMs) {
          fired = true;
          logger.info({ silent_ms: Math.round(at - quietSince), dbfs: Number.isFinite(dbfs) ? Math.round(dbfs) : null }, "the meeting has been silent; leaving");
          options.onSilence();
        }
      },
    });
  } catch (err) {
    logger.warn({ err }, "silence watch: parec failed; silence is not measured");
  }
  return {
    stop() {
      void level?.stop();
    },
  };
}
