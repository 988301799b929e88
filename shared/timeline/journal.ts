import { open, readFile } from "node:fs/promises";
import { decodeFrames, encodeFrame } from "../journal/framing.ts";
import { timelineRecordSchema, type TimelineRecord } from "./records.ts";

/** `.sessions/<id>/timeline.journal`: inside the session folder, removed with it once stored. */
export const TIMELINE_JOURNAL_NAME = "timeline.journal";

export interface TimelineJournal {
  append(record: TimelineRecord): void;
  /** Makes what was appended durable (fsync); the writer calls it at a bounded rate. */
  sync(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Appends framed records (the session journal's framing: length, CRC, JSON). Writes are chained
 * and never awaited by the observer: a record reaches the kernel at once, which is all a killed
 * process needs; `sync()` adds the fsync for a machine that loses power.
 */
export async function openTimelineJournal(path: string): Promise<TimelineJournal> {
  const handle = await open(path, "a");
  let tail: Promise<unknown> = Promise.resolve();
  let closed = false;
  const chain = (work: () => Promise<unknown>): Promise<void> => {
    const next = tail.then(work);
    tail = next.catch(() => undefined);
    return next.then(() => undefined);
  };
  return {
    append(record) {
      if (closed) return;
      const frame = encodeFrame(JSON.stringify(timelineRecordSchema.parse(record)));
      void chain(() => handle.write(frame)).catch(() => undefined);
    },
    sync: () => (closed ? Promise.resolve() : chain(() => handle.sync())),
    async close() {
      if (closed) return;
      closed = true;
      await tail;
      await handle.sync().catch(() => undefined);
      await handle.close();
    },
  };
}

/** Every intact record, in write order; an absent file holds none; a torn tail is ignored. */
export async function readTimelineJournal(path: string): Promise<TimelineRecord[]> {
  let buf: Buffer;
  try {
    buf = await readFile(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
  const records: TimelineRecord[] = [];
  for (const { body } of decodeFrames(buf).frames) {
    try {
      const parsed = timelineRecordSchema.safeParse(JSON.parse(body));
      if (parsed.success) records.push(parsed.data);
    } catch {
      break;
    }
  }
  return records;
}
