/**
 * The session events that leave the service: `finished` for every end, `status_changed` for
 * every transition when WEBHOOK_EVENTS is true (decisions.md "Webhooks"). One durable outbox
 * keeps them in order per session; without WEBHOOK_URL nothing is sent.
 */
import type { Logger } from "../../shared/log/logger.ts";
import type { EndReason, SessionStatus } from "../../shared/journal/records.ts";
import type { ErrorCode } from "../../shared/recording/error-codes.ts";
import type { AutomaticLeave } from "../../shared/session/automatic-leave.ts";
import { createWebhookOutbox, type WebhookOutbox } from "../webhooks/index.ts";

export interface Notifier {
  /** `endReason` and `recordingFile` are known only for the change into the final status. */
  statusChanged(e: {
    sessionId: string;
    reference: string | null;
    status: SessionStatus;
    previous: SessionStatus | null;
    at: Date;
    errorMessage?: string | null;
    errorCode?: ErrorCode | null;
    endReason?: EndReason | null;
    recordingFile?: string | null;
    /** The session's instance when another instance reports for it (takeover, #19). */
    instanceId?: string;
  }): Promise<void>;
  finished(e: {
    sessionId: string;
    reference: string | null;
    status: SessionStatus;
    previous: SessionStatus | null;
    endReason: EndReason;
    recordingFile: string | null;
    errorMessage: string | null;
    errorCode?: ErrorCode | null;
    evidenceFiles?: string[];
    automaticLeave?: AutomaticLeave | null;
    at: Date;
    /** Where the speaker timeline was stored (issue #17), null without one. */
    timelineFile?: string | null;
  }): Promise<void>;
  /** `participant_joined` / `participant_left` (issue #17), only with WEBHOOK_EVENTS. */
  participant(e: {
    sessionId: string;
    reference: string | null;
    event: "joined" | "left";
    participant: { id: string; name: string; label: string | null };
    offsetSeconds: number | null;
    at: Date;
  }): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
  idle(): Promise<void>;
}

export function createNotifier(options: { url?: string; secret?: string; events: boolean; dir: string; logger: Logger; instanceId?: string }): Notifier {
  const { url, events, logger } = options;
  // Cluster mode names the session's instance in every event (decisions.md "Additions").
  const instance = (id?: string): { instance_id?: string } => {
    const value = id ?? options.instanceId;
    return value === undefined ? {} : { instance_id: value };
  };
  const outbox: WebhookOutbox | null = url ? createWebhookOutbox({ dir: options.dir, url, secret: options.secret, logger }) : null;
  const enqueue = async (sessionId: string, payload: Parameters<WebhookOutbox["enqueue"]>[1]): Promise<void> => {
    if (!outbox) return;
    try {
      await outbox.enqueue(sessionId, payload);
    } catch (error) {
      // A full disk must not stop the session from ending; the outcome stays in the database.
      logger.error({ err: error, session_id: sessionId, event: payload.event }, "webhook could not be queued");
    }
  };
  return {
    async statusChanged(e) {
      if (!events) return;
      await enqueue(e.sessionId, {
        event: "status_changed",
        session_id: e.sessionId,
        reference: e.reference,
        status: e.status,
        previous_status: e.previous,
        end_reason: e.endReason ?? null,
        recording_file: e.recordingFile ?? null,
        error_message: e.errorMessage ?? null,
        error_code: e.status === "error" ? (e.errorCode ?? "internal") : null,
        timestamp: e.at.toISOString(),
        ...instance(e.instanceId),
      });
    },
    async finished(e) {
      await enqueue(e.sessionId, {
        event: "finished",
        session_id: e.sessionId,
        reference: e.reference,
        status: e.status,
        previous_status: e.previous,
        end_reason: e.endReason,
        recording_file: e.recordingFile,
        error_message: e.errorMessage,
        error_code: e.status === "error" ? (e.errorCode ?? "internal") : null,
        evidence_files: e.evidenceFiles ?? [],
        automatic_leave: e.automaticLeave ?? null,
        timeline_file: e.timelineFile ?? null,
        timestamp: e.at.toISOString(),
        ...instance(),
      });
    },
    async participant(e) {
      if (!events) return;
      await enqueue(e.sessionId, {
        event: e.event === "joined" ? "participant_joined" : "participant_left",
        session_id: e.sessionId,
        reference: e.reference,
        participant: e.participant,
        offset_seconds: e.offsetSeconds,
        timestamp: e.at.toISOString(),
        ...instance(),
      });
    },
    start: async () => outbox?.start(),
    close: async () => outbox?.close(),
    idle: async () => outbox?.idle(),
  };
}
