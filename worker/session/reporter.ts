import type { EndReason, SessionStatus } from "../../shared/ipc/messages.ts";
import type { Journal } from "../../shared/journal/index.ts";
import type { Logger } from "../../shared/log/logger.ts";
import type { Channel } from "./channel.ts";

export interface Transition {
  endReason?: EndReason;
  errorMessage?: string;
  joinedAt?: string;
}

/**
 * The session's status as the supervisor and the journal see it. Every transition is journalled
 * (fsynced: a restart must know how far the session got) and then sent as a `status` message.
 */
export class StatusReporter {
  #status: SessionStatus | null = null;
  #participants: number | null | undefined;

  constructor(
    private readonly channel: Channel,
    private readonly journal: Journal,
    private readonly logger: Logger,
  ) {}

  get status(): SessionStatus | null {
    return this.#status;
  }

  async transition(status: SessionStatus, extra: Transition = {}): Promise<void> {
    if (status === this.#status) return;
    const previous = this.#status;
    this.#status = status;
    const at = new Date().toISOString();
    this.logger.info({ status, previous_status: previous, ...extra }, "session status");
    try {
      await this.journal.append({
        type: "status",
        status,
        previous_status: previous,
        at,
        ...(extra.endReason ? { end_reason: extra.endReason } : {}),
        ...(extra.errorMessage ? { error_message: extra.errorMessage } : {}),
      });
    } catch (err) {
      // The supervisor still hears of it; losing a journal line must not stop the session.
      this.logger.error({ err, status }, "could not journal the status");
    }
    await this.channel.send({
      type: "status",
      status,
      previousStatus: previous,
      at,
      endReason: extra.endReason ?? null,
      errorMessage: extra.errorMessage ?? null,
      joinedAt: extra.joinedAt ?? null,
    });
  }

  /** Sends `participants` only when the count changed (null: the page does not tell). */
  participants(count: number | null): void {
    if (count === this.#participants) return;
    this.#participants = count;
    void this.channel.send({ type: "participants", count });
  }
}
