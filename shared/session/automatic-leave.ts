/**
 * `automatic_leave` of `POST /join` (issue #16): per-session leave rules, each field overriding the
 * service default for that session only. The same schema checks the API body (422 naming the
 * field) and travels to the worker in `init`; the status echoes the object as sent.
 */
import { z } from "zod";

/** Audio below this level (dBFS) counts as silence for `silence_minutes`. */
export const SILENCE_DBFS = -60;

const positiveMinutes = (max?: number) => {
  const base = z.number().positive();
  return max === undefined ? base : base.max(max);
};

export const automaticLeaveSchema = z
  .object({
    /** Lobby wait before `not_admitted` (MEETING_WAIT_FOR_LOBBY for this session). */
    lobby_wait_minutes: positiveMinutes(240).optional(),
    /** Consecutive one-second checks alone before leaving (the spec's default: 5). */
    alone_seconds: z.number().int().min(1).max(3600).optional(),
    /** Leave after this long with the meeting's audio below -60 dBFS (end_reason `silence`); off when absent. */
    silence_minutes: positiveMinutes(24 * 60).optional(),
    /** Silence counts only from this long after admission (default 0). */
    silence_activate_after_minutes: z.number().min(0).max(24 * 60).optional(),
    /** MAX_RECORDING_MINUTES for this session; never above the service's setting. */
    max_duration_minutes: positiveMinutes().optional(),
    /** Name substrings: only the bot and such participants left → end_reason `only_bots`. */
    bot_names: z.array(z.string().trim().min(1).max(100)).max(50).optional(),
  })
  .strict();

export type AutomaticLeave = z.infer<typeof automaticLeaveSchema>;

/** The rules a worker runs with: the request's fields over the service defaults. */
export interface LeaveRules {
  lobbyWaitMs: number;
  aloneChecks: number;
  silenceMs: number | null;
  silenceActivateAfterMs: number;
  maxDurationMs: number;
  botNames: string[];
}

export function resolveLeaveRules(request: AutomaticLeave | null | undefined, defaults: { lobbyWaitMs: number; maxRecordingMs: number }): LeaveRules {
  const a = request ?? {};
  return {
    lobbyWaitMs: a.lobby_wait_minutes !== undefined ? a.lobby_wait_minutes * 60_000 : defaults.lobbyWaitMs,
    aloneChecks: a.alone_seconds ?? 5,
    silenceMs: a.silence_minutes !== undefined ? a.silence_minutes * 60_000 : null,
    silenceActivateAfterMs: (a.silence_activate_after_minutes ?? 0) * 60_000,
    maxDurationMs: a.max_duration_minutes !== undefined ? Math.min(a.max_duration_minutes * 60_000, defaults.maxRecordingMs) : defaults.maxRecordingMs,
    botNames: a.bot_names ?? [],
  };
}
