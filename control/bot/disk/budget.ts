/**
 * What one session may write to RECORDINGS_DIR at worst (issue #15 "Disk safety"): its recording
 * at the format's rate for the lobby wait plus MAX_RECORDING_MINUTES (ffmpeg records from before
 * the join), what the cut at the admission needs on top (nothing for WAV, a header rewrite; a
 * second copy for FLAC, re-encoded beside the original), and the worker's own folder (Chromium's
 * profile, PulseAudio's state).
 */
import type { RecordingFormat } from "../../../shared/journal/records.ts";

/** 48 kHz × 2 channels × 2 bytes: 11.52 MB a minute. */
export const PCM_BYTES_PER_MINUTE = 48_000 * 2 * 2 * 60;
/**
 * FLAC is "about a third" of PCM for speech (recorder-bot.md); noise and music compress worse.
 * 0.6 is a planning estimate with headroom over that, not a measured bound: white noise can
 * approach PCM's size (FLAC then stores verbatim frames).
 */
export const FLAC_PLANNING_RATIO = 0.6;
/** Chromium's profile, PulseAudio's state, the journal: measured 25-40 MB per worker. */
export const WORKER_DIR_BYTES = 64 * 1024 * 1024;
/** RIFF sizes are 32-bit: a WAV holds at most 4 GiB (less its 44-byte header). */
export const WAV_MAX_BYTES = 0xffffffff - 44;

export function recordingBytesPerMinute(format: RecordingFormat): number {
  return format === "wav" ? PCM_BYTES_PER_MINUTE : Math.ceil(PCM_BYTES_PER_MINUTE * FLAC_PLANNING_RATIO);
}

export interface SessionLimits {
  format: RecordingFormat;
  maxRecordingMinutes: number;
  lobbyWaitMinutes: number;
}

/** The recording's largest size: lobby wait plus the time in the call. */
export function maxRecordingBytes(l: SessionLimits): number {
  return Math.ceil((l.maxRecordingMinutes + l.lobbyWaitMinutes) * recordingBytesPerMinute(l.format));
}

/** Everything one session may still need, given what its recording holds already. */
export function sessionNeedBytes(l: SessionLimits, record: boolean, writtenBytes = 0): number {
  if (!record) return WORKER_DIR_BYTES;
  const recording = maxRecordingBytes(l);
  const trimCopy = l.format === "flac" ? recording : 0;
  return WORKER_DIR_BYTES + Math.max(0, recording + trimCopy - writtenBytes);
}

/** MAX_RECORDING_MINUTES a WAV can hold (4 GiB at 48 kHz stereo 16-bit ≈ 372.8 minutes). */
export const WAV_MAX_MINUTES = WAV_MAX_BYTES / PCM_BYTES_PER_MINUTE;
