export { UnrepairableRecordingError, type RepairResult } from "./errors.ts";
export { repairWav } from "./wav.ts";
export { repairFlac, readFlacStreamInfo, type FlacStreamInfo } from "./flac.ts";
export { repairRecording } from "./repair.ts";
export { probeDuration } from "./probe.ts";
export { trimWavHead, type WavTrimResult } from "./trim-wav.ts";
export { trimFlacHead, flacTrimBudgetMs, TRIM_TAG } from "./trim-flac.ts";
export { ADMISSION_MARGIN_SEC, trimOffsetFor, trimOffsetFromJournal, trimRecording, type TrimOutcome } from "./trim.ts";
