import type { RecordingFormat } from "../journal/records.ts";
import type { RepairResult } from "./errors.ts";
import { repairFlac } from "./flac.ts";
import { repairWav } from "./wav.ts";

/** Repairs a recording of the given format after its ffmpeg was killed; a clean file is left as is. */
export function repairRecording(path: string, format: RecordingFormat): Promise<RepairResult> {
  return format === "wav" ? repairWav(path) : repairFlac(path);
}
