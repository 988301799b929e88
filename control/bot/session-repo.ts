/**
 * Every database access of the bot feature. The reference idempotency rule lives here: a session
 * holds `activeReference` while it runs, and the unique index decides which of several concurrent
 * joins with one reference creates the session (conventions.md 6: no read-then-write).
 */
import type { BotSession } from "../../prisma/generated/sqlite/client.ts";
import type { Db } from "../db/client.ts";
import { isUniqueViolation } from "../db/client.ts";
import type { EndReason, RecordingFormat, SessionStatus } from "../../shared/journal/records.ts";
import type { ErrorCode } from "../../shared/recording/error-codes.ts";
import type { AutomaticLeave } from "../../shared/session/automatic-leave.ts";
import { FINAL_STATUSES } from "../../shared/ipc/messages.ts";

export const RUNNING_STATUSES: readonly SessionStatus[] = ["joining", "lobby", "recording", "connected"];

export interface NewSession {
  id: string;
  meetingUrl: string;
  reference: string | null;
  displayName: string;
  record: boolean;
  format: RecordingFormat;
  createdAt: Date;
  /** #16: the request's automatic_leave, stored as sent. */
  automaticLeave?: AutomaticLeave | null;
}

export interface FinalFields {
  status: SessionStatus;
  endReason: EndReason;
  errorMessage: string | null;
  /** shared/recording/error-codes.ts with status `error` (disk_full, storage_failed, ...), else null. */
  errorCode?: ErrorCode | null;
  recordingFile: string | null;
  /** A 64-bit column: a 4-hour WAV is 2.7 GB (issue #15). */
  recordingBytes: number | bigint | null;
  endedAt: Date;
  /** The stored speaker timeline (issue #17); left as it is when absent. */
  timelineFile?: string | null;
}

export type CreateOutcome = { created: true; row: BotSession } | { created: false; row: BotSession };

export class SessionRepo {
  constructor(private readonly db: Db) {}

  find(id: string): Promise<BotSession | null> {
    return this.db.botSession.findUnique({ where: { id } });
  }

  findActiveByReference(reference: string): Promise<BotSession | null> {
    return this.db.botSession.findUnique({ where: { activeReference: reference } });
  }

  /**
   * Inserts the session, or returns the active one holding the same reference. A loser of the
   * unique-index race re-reads the winner; if the winner already ended in between, it retries.
   */
  async create(input: NewSession): Promise<CreateOutcome> {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        const row = await this.db.botSession.create({
          data: {
            id: input.id,
            meetingUrl: input.meetingUrl,
            reference: input.reference,
            activeReference: input.reference,
            displayName: input.displayName,
            status: "joining",
            record: input.record,
            recordingFormat: input.format,
            createdAt: input.createdAt,
            automaticLeave: input.automaticLeave ? JSON.stringify(input.automaticLeave) : null,
          },
        });
        return { created: true, row };
      } catch (error) {
        if (!isUniqueViolation(error) || input.reference === null) throw error;
        const existing = await this.findActiveByReference(input.reference);
        if (existing) return { created: false, row: existing };
      }
    }
    throw new Error(`could not claim reference ${input.reference ?? ""}`);
  }

  /** Restores a row from a journal after a crash when the database lost it (or never had it). */
  async createFromJournal(input: NewSession, status: SessionStatus): Promise<void> {
    await this.db.botSession.upsert({
      where: { id: input.id },
      update: {},
      create: {
        id: input.id,
        meetingUrl: input.meetingUrl,
        reference: input.reference,
        activeReference: null,
        displayName: input.displayName,
        status,
        record: input.record,
        recordingFormat: input.format,
        createdAt: input.createdAt,
      },
    });
  }

  /** A running status; never overwrites a final one (a late message after the end is ignored). */
  /** A running session's new status; false when the row is no longer running (its end was written). */
  async setStatus(id: string, status: SessionStatus, extra: { joinedAt?: Date | null; errorMessage?: string | null } = {}): Promise<boolean> {
    const { count } = await this.db.botSession.updateMany({
      where: { id, status: { in: [...RUNNING_STATUSES] } },
      data: {
        status,
        ...(extra.joinedAt ? { joinedAt: extra.joinedAt } : {}),
        ...(extra.errorMessage !== undefined ? { errorMessage: extra.errorMessage } : {}),
      },
    });
    return count > 0;
  }

  async setParticipants(id: string, count: number | null): Promise<void> {
    await this.db.botSession.updateMany({ where: { id }, data: { participantCount: count } });
  }

  /** The one final write: status, outcome, file; frees the reference for a new session. */
  async finish(id: string, fields: FinalFields): Promise<BotSession | null> {
    const recordingBytes = fields.recordingBytes === null ? null : BigInt(fields.recordingBytes);
    // The one place a session gets its final status: an error code only goes with `error`.
    const errorCode = fields.status === "error" ? (fields.errorCode ?? "internal") : null;
    await this.db.botSession.updateMany({
      where: { id },
      data: { ...fields, recordingBytes, errorCode, activeReference: null },
    });
    return this.find(id);
  }

  /**
   * Newest first, `limit` rows after `after` (the last row of the previous page, by its
   * createdAt and id: a keyset, so a page is stable while new sessions arrive).
   */
  list(filter: { status?: SessionStatus; reference?: string }, page: { limit?: number; after?: { createdAt: Date; id: string } } = {}): Promise<BotSession[]> {
    const after = page.after;
    return this.db.botSession.findMany({
      where: {
        ...(filter.status ? { status: filter.status } : {}),
        ...(filter.reference !== undefined ? { reference: filter.reference } : {}),
        ...(after ? { OR: [{ createdAt: { lt: after.createdAt } }, { createdAt: after.createdAt, id: { lt: after.id } }] } : {}),
      },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      ...(page.limit !== undefined ? { take: page.limit } : {}),
    });
  }

  /** Sessions left in a running status (by a crashed run) for recovery. */
  listRunning(): Promise<BotSession[]> {
    return this.db.botSession.findMany({ where: { status: { in: [...RUNNING_STATUSES] } } });
  }

  countRunning(): Promise<number> {
    return this.db.botSession.count({ where: { status: { in: [...RUNNING_STATUSES] } } });
  }
}

export const isFinal = (status: string): boolean => FINAL_STATUSES.has(status as SessionStatus);
