import { execFile } from "node:child_process";
import { promisify } from "node:util";

const execFileAsync = promisify(execFile);

/** Duration in seconds as ffprobe reads it from the container; null when it cannot tell. */
export async function probeDuration(path: string): Promise<number | null> {
  const { stdout } = await execFileAsync("ffprobe", [
    "-v",
    "error",
    "-show_entries",
    "format=duration",
    "-of",
    "default=noprint_wrappers=1:nokey=1",
    path,
  ]);
  const value = Number.parseFloat(stdout.trim());
  return Number.isFinite(value) ? value : null;
}
