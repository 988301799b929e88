/** The file holds nothing a player could read (e.g. ffmpeg died before writing the header). */
export class UnrepairableRecordingError extends Error {
  constructor(
    readonly path: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(`cannot repair recording ${path}: ${reason}`, options);
    this.name = "UnrepairableRecordingError";
  }
}

export interface RepairResult {
  /** Size of the file after repair. */
  bytes: number;
  /** Samples per channel. */
  frames: number;
  durationSec: number;
  sampleRate: number;
  channels: number;
  /** False when the file was already complete (a clean ffmpeg stop) and was left untouched. */
  repaired: boolean;
}
