/**
 * The audio routes' access to a session's worker: the refusals every audio route shares (404
 * unknown session, 409 playback off or not in the call) and the IPC request with the worker's
 * `{status, message}` errors mapped onto the error catalogue.
 */
import type { z } from "zod";
import { AppError, fail, type ErrorCode } from "../../http/errors.ts";
import type { BotRouteDeps } from "../context.ts";
import type { AudioOp } from "../../../worker/playback/ops.ts";
import { opArgsSchemas } from "../../../worker/playback/ops.ts";
import type { SessionRunner } from "../supervisor/session-runner.ts";
import { sessionOr404 } from "../routes/session-or-404.ts";

const IN_CALL = new Set(["recording", "connected"]);

const BY_STATUS: Record<number, ErrorCode> = { 400: "bad_request", 404: "not_found", 409: "conflict", 413: "payload_too_large" };

export type AudioDeps = Pick<BotRouteDeps, "config" | "repo" | "supervisor">;

/** The running session that may take an audio request now; throws the API's refusal otherwise. */
export async function audioSession(deps: AudioDeps, sessionId: string): Promise<SessionRunner> {
  const row = await sessionOr404(deps.repo, sessionId);
  // decisions.md: with playback off every audio route answers 409 (recorder-bot.md rule 7).
  if (!deps.config.bot.MIC_PLAYBACK_ENABLED) throw fail.conflict("Microphone playback is disabled (MIC_PLAYBACK_ENABLED is off).");
  const runner = deps.supervisor.get(sessionId);
  // The runner's status is updated as the worker's messages arrive; the row may lag behind it.
  const status = runner?.status ?? row.status;
  if (!runner || !IN_CALL.has(status)) throw fail.conflict(`The bot is not in the call (status ${status}).`);
  return runner;
}

export async function callWorker<O extends AudioOp>(runner: SessionRunner, op: O, args: z.input<(typeof opArgsSchemas)[O]>): Promise<unknown> {
  const parsed = opArgsSchemas[op].parse(args) as Record<string, unknown>;
  const response = await runner.request(op, parsed);
  if (response.ok) return response.result;
  const status = response.error?.status ?? 500;
  const code = BY_STATUS[status];
  if (!code) throw new AppError("internal", { cause: new Error(response.error?.message ?? "worker failed") });
  throw new AppError(code, { message: response.error?.message });
}
