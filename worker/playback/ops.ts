/**
 * The audio operations carried by IPC `request` messages (shared/ipc/messages.ts keeps `op` and
 * `args` open; this file closes them). The control plane builds args with these schemas and the
 * worker parses them on arrival, so both sides agree on one typed set.
 */
import { z } from "zod";

/** decisions.md: volume 0.0 to 2.0, default 1.0. */
export const volumeSchema = z.number().min(0).max(2);

export const playArgsSchema = z.object({
  /** An absolute path the control plane resolved (realpath) under MEDIA_DIR, or a saved upload. */
  path: z.string().min(1),
  loop: z.boolean(),
  volume: volumeSchema,
  unmute: z.boolean(),
  /** An upload: the worker deletes the file once it finished playing, was stopped or replaced. */
  deleteAfter: z.boolean(),
});
export type PlayArgs = z.infer<typeof playArgsSchema>;

export const stopArgsSchema = z.object({ muteAfter: z.boolean() });
export type StopArgs = z.infer<typeof stopArgsSchema>;

/** Headerless PCM formats ffmpeg cannot detect from the bytes; anything else is probed. */
export const RAW_FORMATS = ["s16le", "s16be", "s32le", "f32le", "u8"] as const;
export type RawFormat = (typeof RAW_FORMATS)[number];

export const streamOpenArgsSchema = z.object({
  /** A RAW_FORMATS name (48 kHz mono), or null to detect the container from the bytes. */
  format: z.enum(RAW_FORMATS).nullable(),
  unmute: z.boolean(),
});
export type StreamOpenArgs = z.infer<typeof streamOpenArgsSchema>;

export const streamCloseArgsSchema = z.object({});

export const opArgsSchemas = {
  play: playArgsSchema,
  stop: stopArgsSchema,
  stream_open: streamOpenArgsSchema,
  stream_close: streamCloseArgsSchema,
} as const;
export type AudioOp = keyof typeof opArgsSchemas;

/** What the worker answers; the control plane turns it into the HTTP body. */
export const playResultSchema = z.object({ status: z.literal("playing"), unmuted: z.boolean() });
export const stopResultSchema = z.object({ status: z.literal("stopped"), muted: z.boolean() });
/** The unix socket the control plane connects to and pipes one ingest body into. */
export const streamOpenResultSchema = z.object({ socketPath: z.string(), unmuted: z.boolean() });
export const streamCloseResultSchema = z.object({ status: z.literal("closed") });
