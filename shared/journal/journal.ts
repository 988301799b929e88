import { open, readFile, readdir, mkdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fsyncDir } from "./durable-fs.ts";
import { decodeFrames, encodeFrame, type FrameDamageReason } from "./framing.ts";
import { journalRecordSchema, type JournalRecord } from "./records.ts";

/** Journals live in `RECORDINGS_DIR/.sessions` (recorder-bot.md "What the service does"). */
export const JOURNAL_DIR_NAME = ".sessions";
const JOURNAL_SUFFIX = ".journal";

export interface JournalDamage {
  /** Byte offset of the first frame that could not be read. */
  offset: number;
  reason: FrameDamageReason | "bad_json";
}

export interface JournalContents {
  /** Every valid record before the first damaged frame, in write order. */
  records: JournalRecord[];
  /** True when the file holds bytes after the valid prefix (torn tail or corruption). */
  damaged: boolean;
  damage: JournalDamage | null;
  /** Length of the valid prefix; appending resumes here. */
  validBytes: number;
  /** Intact frames whose record this version does not know (a newer kind); skipped, not damage. */
  skipped: number;
}

export interface Journal {
  readonly path: string;
  /** Resolves once the record is written (and fsynced when opened with `fsync: true`). */
  append(record: JournalRecord): Promise<void>;
  close(): Promise<void>;
}

export interface OpenJournalOptions {
  /** fsync after every record; the worker wants this, bulk tests may not. */
  fsync: boolean;
}

export function journalPath(dir: string, sessionId: string): string {
  return join(dir, `${sessionId}${JOURNAL_SUFFIX}`);
}

function parseContents(buf: Buffer): JournalContents {
  const decoded = decodeFrames(buf);
  const records: JournalRecord[] = [];
  let skipped = 0;
  let damage: JournalDamage | null = decoded.damage;
  let validBytes = decoded.validBytes;
  for (const { offset, body } of decoded.frames) {
    let value: unknown;
    try {
      value = JSON.parse(body);
    } catch {
      // The CRC matched, so the writer wrote this; treat it as corruption all the same.
      damage = { offset, reason: "bad_json" };
      validBytes = offset;
      break;
    }
    const parsed = journalRecordSchema.safeParse(value);
    if (parsed.success) records.push(parsed.data);
    else skipped++;
  }
  return { records, damaged: damage !== null, damage, validBytes, skipped };
}

/** Reads a journal; never throws for damaged contents (only for I/O errors such as ENOENT). */
export async function readJournal(path: string): Promise<JournalContents> {
  return parseContents(await readFile(path));
}

/**
 * Opens a journal for appending, creating it if needed. A torn tail from a crash is cut off first:
 * records appended after it would otherwise sit behind the damage, where readers never look.
 */
export async function openJournal(path: string, options: OpenJournalOptions): Promise<Journal> {
  const handle = await open(path, "a+");
  try {
    const existing = await handle.readFile();
    const { validBytes } = parseContents(existing);
    if (existing.length === 0) {
      // A new file: its directory entry must survive a crash too.
      await fsyncDir(dirname(path));
    } else if (validBytes < existing.length) {
      await handle.truncate(validBytes);
      await handle.sync();
    }
  } catch (error) {
    await handle.close();
    throw error;
  }
  // Appends are chained so concurrent callers never interleave bytes of two records.
  let tail: Promise<void> = Promise.resolve();
  let closed = false;
  const append = (record: JournalRecord): Promise<void> => {
    if (closed) return Promise.reject(new Error(`journal ${path} is closed`));
    const frame = encodeFrame(JSON.stringify(journalRecordSchema.parse(record)));
    const write = tail.then(async () => {
      await handle.write(frame);
      if (options.fsync) await handle.sync();
    });
    tail = write.catch(() => undefined);
    return write;
  };
  return {
    path,
    append,
    async close() {
      if (closed) return;
      closed = true;
      await tail;
      await handle.close();
    },
  };
}

export interface JournalEntry {
  sessionId: string;
  path: string;
}

/** Journals in `dir`, sorted by session id; an absent directory holds none. */
export async function listJournals(dir: string): Promise<JournalEntry[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  return names
    .filter((name) => name.endsWith(JOURNAL_SUFFIX) && name.length > JOURNAL_SUFFIX.length)
    .sort()
    .map((name) => ({ sessionId: name.slice(0, -JOURNAL_SUFFIX.length), path: join(dir, name) }));
}

/** Creates the journal directory (and its parents). */
export async function ensureJournalDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
}
