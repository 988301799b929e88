/**
 * The IPC `request` ops of live listening (shared/ipc/messages.ts keeps `op` and `args` open;
 * this closes them for listening, as worker/playback/ops.ts does for playback).
 */
import { z } from "zod";

export const LISTEN_OPS = ["listen_open"] as const;
export type ListenOp = (typeof LISTEN_OPS)[number];

/** Opens the worker's listen socket (once per session; later calls answer the same path). */
export const listenOpenArgsSchema = z.object({});
export const listenOpenResultSchema = z.object({ socketPath: z.string() });
export type ListenOpenResult = z.infer<typeof listenOpenResultSchema>;

export function isListenOp(op: string): op is ListenOp {
  return (LISTEN_OPS as readonly string[]).includes(op);
}
