import { randomBytes } from "node:crypto";
import { open, rename, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/**
 * fsyncs a directory so that entries created, renamed or removed in it survive a power loss;
 * without it a renamed file can vanish although its own data was synced.
 */
export async function fsyncDir(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Puts a finished temporary file (written beside `path`, by another process for instance) in
 * place of `path` so a crash leaves either the old file or the whole new one: fsync the temp
 * file, rename it over `path`, fsync the directory.
 */
export async function replaceDurably(temp: string, path: string): Promise<void> {
  const handle = await open(temp, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temp, path);
  await fsyncDir(dirname(path));
}

/** Prefix of temporary files; directory scanners skip (and may delete) names starting with it. */
export const TEMP_PREFIX = ".tmp-";

/**
 * Writes `data` to `path` so that after a crash the file is either absent (or its old version) or
 * complete: temp file in the same directory, fsync, rename, fsync the directory.
 */
export async function writeFileDurably(path: string, data: string | Buffer, mode = 0o600): Promise<void> {
  const dir = dirname(path);
  const temp = join(dir, `${TEMP_PREFIX}${randomBytes(6).toString("hex")}-${basename(path)}`);
  const handle = await open(temp, "wx", mode);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } catch (error) {
    await handle.close();
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await handle.close();
  try {
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await fsyncDir(dir);
}
