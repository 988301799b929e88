/**
 * A small ballast file in RECORDINGS_DIR (`.sessions/.disk-reserve`) written at start and
 * released when a recording ends on a full disk (ENOSPC), so the journal's last records, the
 * webhook outbox and the `finished` webhook still find room (issue #15). It is written again
 * once the disk has room for it.
 */
import { open, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "../../../shared/log/logger.ts";
import { journalDirOf } from "../paths.ts";

export const RESERVE_BYTES = 8 * 1024 * 1024;

export interface DiskReserve {
  /** Writes the ballast if it is missing; false when the disk has no room for it. */
  ensure(): Promise<boolean>;
  /** Frees the ballast's space now. */
  release(): Promise<void>;
}

export function createDiskReserve(recordingsDir: string, logger: Logger): DiskReserve {
  const path = join(journalDirOf(recordingsDir), ".disk-reserve");
  let present = false;
  let writing: Promise<boolean> | null = null;
  return {
    ensure() {
      if (present) return Promise.resolve(true);
      writing ??= (async () => {
        const handle = await open(path, "w").catch(() => null);
        if (!handle) return false;
        try {
          // Real blocks, not a sparse file: zeros written out.
          const chunk = Buffer.alloc(1024 * 1024);
          for (let done = 0; done < RESERVE_BYTES; done += chunk.length) await handle.write(chunk);
          await handle.sync();
          present = true;
          return true;
        } catch (err) {
          logger.warn({ err }, "the disk reserve could not be written");
          await rm(path, { force: true }).catch(() => undefined);
          return false;
        } finally {
          await handle.close().catch(() => undefined);
        }
      })().finally(() => (writing = null));
      return writing;
    },
    async release() {
      await writing;
      await rm(path, { force: true }).catch(() => undefined);
      if (present) logger.warn({ bytes: RESERVE_BYTES }, "disk full: the reserve is released for the journal and the webhooks");
      present = false;
    },
  };
}
