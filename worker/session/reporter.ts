import type { EndReason, SessionStatus } from "../../shared/ipc/messages.ts";
import type { Journal } from "../../shared/journal/index.ts";
import type { Logger } from "../../shared/log/logger.ts";
import type { ErrorCode } from "../../shared/recording/error-codes.ts";
import type { Channel } from "./channel.ts";

export interface Transition {
  endReason?: EndReason;
  errorMessage?: string;
  errorCode?: ErrorCode | null;
  joinedAt?: string;
}

/**
 * The session's status as the supervisor and the journal see it. Every transition is journalled
 * (fsynced: a restart must know how far the session got) and then sent as a `status` message.
 */
export class StatusReporter {
  #status: SessionStatus | null = null;
  #participants: number | null | undefined;
  readonly #statusObservers: ((status: SessionStatus) => void)[] = [];

  constructor(
    private readonly channel: Channel,
    private readonly journal: Journal,
    private readonly logger: Logger,
  ) {}

  get status(): SessionStatus | null {
    return this.#status;
  }

  /** Called on every transition, after the status changed (live listeners' status events). */
  onStatus(observer: (status: SessionStatus) => void): void {
    this.#statusObservers.push(observer);
  }

  async transition(status: SessionStatus, extra: Transition = {}): Promise<void> {
    if (status === this.#status) return;
    const previous = this.#status;
    this.#status = status;
    for (const observer of this.#statusObservers) observer(status);
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
        ...(extra.errorCode ? { error_code: extra.errorCode } : {}),
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
      errorCode: extra.errorCode ?? null,
      joinedAt: extra.joinedAt ?? null,
    });
  }

  /** Where in the recording the bot got into the call (seconds, monotonic); fsynced like a status. */
  async admitted(recordingOffsetSec: number | null): Promise<void> {
    await this.journal.append({ type: "admitted", recording_offset_sec: recordingOffsetSec, at: new Date().toISOString() }).catch((err: unknown) => {
      this.logger.error({ err }, "could not journal the admission");
    });
  }

  /** Sends `participants` only when the count changed (null: the page does not tell). */
  participants(count: number | null): void {
    if (count === this.#participants) return;
    this.#participants = count;
    void this.channel.send({ type: "participants", count });
  }
}
