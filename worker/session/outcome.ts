import type { EndReason, SessionStatus } from "../../shared/ipc/messages.ts";
import type { ErrorCode } from "../../shared/recording/error-codes.ts";

/** Why the session is being ended from outside the Teams page (the abort reason). */
export type StopCause =
  | { kind: "stopped_by_api" }
  /** The control plane is shutting down and asked us to finish (stop reason "shutdown", SIGTERM). */
  | { kind: "shutdown" }
  /** The IPC channel closed: the supervisor is gone; a restart reports the session interrupted. */
  | { kind: "disconnect" }
  | { kind: "max_duration" }
  /** automatic_leave.silence_minutes ran out (#16). */
  | { kind: "silence" }
  | { kind: "error"; message: string; code: ErrorCode };

/** How a session ends: the final status, its cause and, for `error`, what a person can do. */
export interface Outcome {
  status: SessionStatus;
  endReason: EndReason;
  errorMessage: string | null;
  /** With status `error` only (#16). */
  errorCode?: ErrorCode | null;
}

export function errorOutcome(message: string, code: ErrorCode = "internal"): Outcome {
  return { status: "error", endReason: "error", errorMessage: message, errorCode: code };
}

/**
 * The final status for a stop from outside. A shutdown is a deliberate, clean stop by the
 * operator: the recording is closed and complete, so it is `stopped`/`stopped_by_api` rather
 * than `interrupted` (which means the recorder died and the file had to be repaired). A lost
 * supervisor cannot hear the outcome; the journal then says `interrupted` and the next start
 * reports it so.
 */
export function stopOutcome(cause: StopCause): Outcome {
  switch (cause.kind) {
    case "stopped_by_api":
    case "shutdown":
      return { status: "stopped", endReason: "stopped_by_api", errorMessage: null };
    case "disconnect":
      return { status: "interrupted", endReason: "interrupted", errorMessage: null };
    case "max_duration":
      return { status: "stopped", endReason: "max_duration", errorMessage: null };
    case "silence":
      return { status: "stopped", endReason: "silence", errorMessage: null };
    case "error":
      return errorOutcome(cause.message, cause.code);
  }
}

export function isStopCause(value: unknown): value is StopCause {
  return typeof value === "object" && value !== null && "kind" in value;
}
