import { randomUUID } from "node:crypto";
import { mkdir, readFile, readdir, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { fsyncDir, TEMP_PREFIX, writeFileDurably } from "../../shared/journal/durable-fs.ts";
import type { Logger } from "../../shared/log/logger.ts";
import { webhookPayloadSchema, type WebhookPayload } from "./payload.ts";

export const DEAD_LETTER_DIR = "dead-letter";

/** One event as kept on disk until a receiver accepts it. */
export const storedEventSchema = z.object({
  version: z.literal(1),
  /** Sent as `webhook-id`; fixed at enqueue so receivers can deduplicate retries and restarts. */
  webhook_id: z.string().min(1),
  session_id: z.string().min(1),
  /** Position within the session; delivery follows it. */
  seq: z.number().int().positive(),
  /** Clock value (ms) at enqueue; the retry window is measured from it. */
  enqueued_at: z.number(),
  payload: webhookPayloadSchema,
});
export type StoredEvent = z.infer<typeof storedEventSchema>;

// Session ids become part of file names: only UUID-like characters, so no path can be built.
const SESSION_ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;
// Ten digits keep names sorting in enqueue order for far more events than a session produces.
const SEQ_DIGITS = 10;

export function assertSafeSessionId(sessionId: string): void {
  if (!SESSION_ID_PATTERN.test(sessionId)) throw new Error(`unsafe session id for a file name: ${JSON.stringify(sessionId)}`);
}

export function fileNameOf(event: StoredEvent): string {
  return `${event.session_id}.${String(event.seq).padStart(SEQ_DIGITS, "0")}.${event.webhook_id}.json`;
}

export function newStoredEvent(sessionId: string, seq: number, enqueuedAt: number, payload: WebhookPayload): StoredEvent {
  return { version: 1, webhook_id: `msg_${randomUUID()}`, session_id: sessionId, seq, enqueued_at: enqueuedAt, payload };
}

/** The outbox directory: pending events as one JSON file each, failed ones under dead-letter/. */
export class OutboxStore {
  constructor(
    readonly dir: string,
    private readonly logger: Logger,
  ) {}

  async init(): Promise<void> {
    await mkdir(join(this.dir, DEAD_LETTER_DIR), { recursive: true });
  }

  /** Resolves once the event survives a crash. */
  async write(event: StoredEvent): Promise<void> {
    await writeFileDurably(join(this.dir, fileNameOf(event)), JSON.stringify(event));
  }

  async remove(event: StoredEvent): Promise<void> {
    // No directory fsync: if the unlink is lost in a crash the event is sent again, which
    // at-least-once delivery allows and the stable webhook-id lets receivers absorb.
    await unlink(join(this.dir, fileNameOf(event)));
  }

  async deadLetter(event: StoredEvent): Promise<void> {
    await this.moveToDeadLetter(fileNameOf(event));
  }

  /**
   * Every pending event, grouped by session in seq order. Temp files are enqueues that never
   * resolved (the caller was not told the event was saved) and are deleted; unreadable files are
   * set aside in dead-letter/ rather than blocking their session forever.
   */
  async load(): Promise<Map<string, StoredEvent[]>> {
    const bySession = new Map<string, StoredEvent[]>();
    for (const name of (await readdir(this.dir)).sort()) {
      const path = join(this.dir, name);
      if (name.startsWith(TEMP_PREFIX)) {
        await unlink(path).catch(() => undefined);
        continue;
      }
      if (!name.endsWith(".json")) continue;
      let event: StoredEvent;
      try {
        event = storedEventSchema.parse(JSON.parse(await readFile(path, "utf8")));
      } catch (error) {
        this.logger.error({ file: name, err: error }, "unreadable webhook outbox file moved to dead-letter");
        await this.moveToDeadLetter(name);
        continue;
      }
      const list = bySession.get(event.session_id) ?? [];
      list.push(event);
      bySession.set(event.session_id, list);
    }
    for (const list of bySession.values()) list.sort((a, b) => a.seq - b.seq);
    return bySession;
  }

  private async moveToDeadLetter(name: string): Promise<void> {
    await rename(join(this.dir, name), join(this.dir, DEAD_LETTER_DIR, name));
    await fsyncDir(join(this.dir, DEAD_LETTER_DIR));
    await fsyncDir(this.dir);
  }
}
