/**
 * Deletes evidence folders older than EVIDENCE_RETENTION_DAYS (#16): at start, then every hour
 * (or every tenth of the retention when that is shorter). A folder's age is its newest file's.
 */
import { readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "../../../shared/log/logger.ts";

const HOUR_MS = 3_600_000;

export interface EvidenceRetention {
  /** One sweep now; resolves with the folders removed. */
  sweep(): Promise<string[]>;
  stop(): void;
}

async function newestMtime(dir: string): Promise<number> {
  let newest = (await stat(dir)).mtimeMs;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const st = await stat(join(dir, name)).catch(() => null);
    if (st && st.mtimeMs > newest) newest = st.mtimeMs;
  }
  return newest;
}

export function startEvidenceRetention(options: { root: string; retentionDays: number; logger: Logger; isRunning: (sessionId: string) => boolean }): EvidenceRetention {
  const { root, logger } = options;
  const maxAgeMs = options.retentionDays * 86_400_000;
  const sweep = async (): Promise<string[]> => {
    const removed: string[] = [];
    const cutoff = Date.now() - maxAgeMs;
    for (const name of await readdir(root).catch(() => [] as string[])) {
      if (options.isRunning(name)) continue;
      const dir = join(root, name);
      try {
        if ((await newestMtime(dir)) >= cutoff) continue;
        await rm(dir, { recursive: true, force: true });
        removed.push(name);
      } catch (err) {
        logger.warn({ err, dir }, "evidence folder could not be checked or removed");
      }
    }
    if (removed.length > 0) logger.info({ sessions: removed.length, retention_days: options.retentionDays }, "old evidence deleted");
    return removed;
  };
  const period = Math.max(1000, Math.min(HOUR_MS, maxAgeMs / 10));
  const timer = setInterval(() => void sweep(), period);
  timer.unref();
  void sweep();
  return { sweep, stop: () => clearInterval(timer) };
}
