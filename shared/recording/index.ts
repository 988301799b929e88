export { UnrepairableRecordingError, type RepairResult } from "./errors.ts";
export { repairWav } from "./wav.ts";
export { repairFlac, readFlacStreamInfo, type FlacStreamInfo } from "./flac.ts";
export { repairRecording } from "./repair.ts";
export { probeDuration } from "./probe.ts";
