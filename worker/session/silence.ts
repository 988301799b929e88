import { spawn } from "node:child_process";
import { SILENCE_DBFS } from "../../shared/session/automatic-leave.ts";
import type { Logger } from "../../shared/log/logger.ts";
import { parecArgs, parecEnv } from "../audio/parec.ts";

/** 8 kHz mono is plenty to tell sound from silence, and costs next to nothing. */
const RATE = 8000;
const BYTES_PER_SECOND = RATE * 2;

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
 * Measures the meeting's audio once a second (RMS of the sink's monitor, read by `parec`) and
 * calls `onSilence` after `silenceMs` in a row below -60 dBFS (issue #16, end_reason `silence`).
 */
export function watchSilence(options: SilenceOptions): SilenceWatch {
  const { logger } = options;
  const args = parecArgs({ pulseEnv: options.pulseEnv, source: options.source, format: { sampleRate: RATE, channels: 1 }, fragmentMs: 200, stream: "silence", client: "bot-silence" });
  const child = spawn("parec", args, { env: parecEnv(options.pulseEnv), stdio: ["ignore", "pipe", "ignore"] });
  const kill = () => child.kill("SIGKILL");
  process.once("exit", kill);
  let pending = Buffer.alloc(0);
  let quietSince: number | null = null;
  let fired = false;
  child.on("error", (err) => logger.warn({ err }, "silence watch: parec failed; silence is not measured"));
  child.stdout.on("data", (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= BYTES_PER_SECOND) {
      const second = pending.subarray(0, BYTES_PER_SECOND);
      pending = pending.subarray(BYTES_PER_SECOND);
      let sum = 0;
      for (let i = 0; i + 1 < second.length; i += 2) {
        const v = second.readInt16LE(i) / 32768;
        sum += v * v;
      }
      const rms = Math.sqrt(sum / (second.length / 2));
      const dbfs = rms > 0 ? 20 * Math.log10(rms) : -Infinity;
      const now = performance.now();
      if (dbfs >= SILENCE_DBFS || now < options.activeFrom) {
        quietSince = null;
        continue;
      }
      quietSince ??= now - 1000;
      if (!fired && now - quietSince >= options.silenceMs) {
        fired = true;
        logger.info({ silent_ms: now - quietSince, dbfs: Number.isFinite(dbfs) ? Math.round(dbfs) : null }, "the meeting has been silent; leaving");
        options.onSilence();
      }
    }
  });
  return {
    stop() {
      process.removeListener("exit", kill);
      kill();
    },
  };
}
