import { rename, rm, stat } from "node:fs/promises";
import type { Logger } from "../../shared/log/logger.ts";
import { spawnChild } from "../../shared/process/child.ts";
import type { RecordingFormat } from "../audio/recorder.ts";

/** Below this there is nothing worth a rewrite of the file. */
const MIN_TRIM_SEC = 0.05;

export interface TrimOptions {
  path: string;
  format: RecordingFormat;
  /** Seconds to drop from the start of the file. */
  offsetSec: number;
  logger: Logger;
}

/**
 * Drops the head of a closed recording: ffmpeg runs from before the join (it needs up to ~2 s to
 * open its input), so the file starts with the join and the lobby wait, which nobody heard.
 * The result is decoded and re-encoded (sample-exact, unlike a stream copy that cuts FLAC at
 * frame boundaries), written next to the file and renamed over it, so a crash in the middle
 * leaves the complete untrimmed file. On failure the untrimmed file is kept: extra silence at the
 * start is better than no recording. Returns the size of the file that stays.
 */
export async function trimHead(options: TrimOptions): Promise<number> {
  const { path, format, offsetSec, logger } = options;
  if (offsetSec < MIN_TRIM_SEC) return size(path);
  const tmp = `${path}.trim.tmp`;
  const child = spawnChild({
    command: "ffmpeg",
    name: "ffmpeg-trim",
    logger,
    args: [
      "-hide_banner",
      "-nostats",
      "-loglevel",
      "error",
      "-ss",
      offsetSec.toFixed(3),
      "-i",
      path,
      "-c:a",
      format === "flac" ? "flac" : "pcm_s16le",
      "-f",
      format,
      "-y",
      tmp,
    ],
  });
  // No timeout: the time needed grows with the recording (hours at most, seconds of CPU per hour).
  const exit = await child.exited;
  if (exit.code !== 0) {
    logger.warn({ ...exit, stderr: child.stderrTail() }, "trimming the recording failed; keeping it untrimmed");
    await rm(tmp, { force: true });
    return size(path);
  }
  await rename(tmp, path);
  logger.info({ offsetSec }, "recording trimmed to the admission");
  return size(path);
}

async function size(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch {
    return 0;
  }
}
