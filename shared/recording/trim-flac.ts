/**
 * Trimming the head of a FLAC: FLAC frames cannot be dropped without re-encoding (a stream copy
 * cuts at frame boundaries and keeps STREAMINFO's old totals), so ffmpeg decodes and re-encodes
 * from the cut into a temporary file beside the recording, which is renamed over it. The new file
 * carries a `TOAMAISUTAA_TRIMMED_SEC` Vorbis comment: a second call (a crash between the rename
 * and the journal) finds it and cuts nothing more. The time it may take scales with the file
 * (`flacTrimBudgetMs`); past it ffmpeg is killed and the untrimmed file stays, which is better
 * than no recording.
 */
import { randomBytes } from "node:crypto";
import { stat, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { execFile } from "node:child_process";
import { replaceDurably, TEMP_PREFIX } from "../journal/durable-fs.ts";

export const TRIM_TAG = "TOAMAISUTAA_TRIMMED_SEC";

/**
 * Decoding and re-encoding FLAC runs at a few hundred times real time on one core (a 4-hour
 * recording of ~1 GB in well under a minute on an idle box); the budget allows 1 s per MB on top
 * of a minute, ample on a loaded machine and still bounded.
 */
export function flacTrimBudgetMs(bytes: number): number {
  return 60_000 + Math.ceil(bytes / 1_000_000) * 1_000;
}

export interface FlacTrimResult {
  changed: boolean;
  bytes: number;
  /** The budget ran out or ffmpeg failed: the file is as it was. */
  failed: string | null;
}

interface Run {
  exitCode: number | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
}

/** A child run to its end (never rejects); `timeoutMs` kills it with SIGKILL. */
function run(command: string, args: string[], timeoutMs = 0): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(command, args, { timeout: timeoutMs, killSignal: "SIGKILL", maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const e = err as (NodeJS.ErrnoException & { killed?: boolean; code?: number | string }) | null;
      resolve({
        exitCode: e ? (typeof e.code === "number" ? e.code : null) : 0,
        timedOut: Boolean(e?.killed && timeoutMs > 0),
        stdout: String(stdout),
        stderr: String(stderr),
      });
    });
    child.stdin?.end();
  });
}

async function trimmedTag(path: string): Promise<number | null> {
  const probe = await run("ffprobe", ["-v", "error", "-show_entries", "format_tags", "-of", "json", path]);
  if (probe.exitCode !== 0) return null;
  const tags = (JSON.parse(probe.stdout) as { format?: { tags?: Record<string, string> } }).format?.tags ?? {};
  const key = Object.keys(tags).find((k) => k.toUpperCase() === TRIM_TAG);
  const value = key ? Number.parseFloat(tags[key] ?? "") : NaN;
  return Number.isFinite(value) ? value : null;
}

export async function trimFlacHead(path: string, offsetSec: number, options: { budgetMs?: number } = {}): Promise<FlacTrimResult> {
  const bytes = (await stat(path)).size;
  if ((await trimmedTag(path)) !== null) return { changed: false, bytes, failed: null };
  const temp = join(dirname(path), `${TEMP_PREFIX}${randomBytes(6).toString("hex")}-${basename(path)}`);
  try {
    const encode = await run(
      "ffmpeg",
      ["-nostdin", "-hide_banner", "-v", "error", "-ss", offsetSec.toFixed(3), "-i", path, "-map", "0:a:0", "-c:a", "flac",
        "-metadata", `${TRIM_TAG}=${offsetSec.toFixed(3)}`, "-f", "flac", "-y", temp],
      options.budgetMs ?? flacTrimBudgetMs(bytes),
    );
    if (encode.timedOut) return { changed: false, bytes, failed: `the trim took longer than its budget of ${options.budgetMs ?? flacTrimBudgetMs(bytes)} ms` };
    if (encode.exitCode !== 0) return { changed: false, bytes, failed: `ffmpeg exited ${String(encode.exitCode)}: ${encode.stderr.slice(-300)}` };
    await replaceDurably(temp, path);
    return { changed: true, bytes: (await stat(path)).size, failed: null };
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}
