/**
 * A session's evidence folder as the API sees it (#16): the listing and one file by name, with no
 * way out of `RECORDINGS_DIR/.evidence/<session_id>/` (names are single path segments, checked
 * against the folder's own listing; symlinks are not followed).
 */
import { lstat, readdir } from "node:fs/promises";
import { extname, join } from "node:path";

export interface EvidenceFile {
  name: string;
  bytes: number;
  created_at: string;
}

/** Names the worker writes: letters, digits, dot, dash, underscore; never a leading dot. */
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

export const CONTENT_TYPES: Record<string, string> = {
  ".png": "image/png",
  ".html": "text/html; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".log": "text/plain; charset=utf-8",
  ".txt": "text/plain; charset=utf-8",
};

export function contentTypeOf(name: string): string {
  return CONTENT_TYPES[extname(name).toLowerCase()] ?? "application/octet-stream";
}

export async function listEvidence(dir: string): Promise<EvidenceFile[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const files: EvidenceFile[] = [];
  for (const name of names.sort()) {
    if (!SAFE_NAME.test(name)) continue;
    const st = await lstat(join(dir, name)).catch(() => null);
    if (!st?.isFile()) continue;
    files.push({ name, bytes: st.size, created_at: (st.birthtimeMs > 0 ? st.birthtime : st.mtime).toISOString() });
  }
  return files;
}

/** The absolute path of `name` in `dir`, or null when it is not one of the folder's regular files. */
export async function evidencePath(dir: string, name: string): Promise<string | null> {
  if (!SAFE_NAME.test(name) || name.includes("..")) return null;
  const listed = await readdir(dir).catch(() => [] as string[]);
  if (!listed.includes(name)) return null;
  const path = join(dir, name);
  const st = await lstat(path).catch(() => null);
  return st?.isFile() ? path : null;
}
