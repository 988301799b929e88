/**
 * Resolves a `play` path under MEDIA_DIR (Rule 1, decisions.md): `..` or an absolute path leaving
 * it answers 400, and so does a symlink whose target leaves it (checked on the realpath, so a link
 * inside MEDIA_DIR cannot expose /etc/passwd); a missing file answers 404 only when the folder it
 * would be in is inside MEDIA_DIR, so neither answer tells what exists outside. The worker is handed the
 * realpath, so ffmpeg opens the very file that was checked, not a link that may change.
 */
import { lstat, readlink, realpath, stat } from "node:fs/promises";
import { dirname, isAbsolute, relative, resolve, sep } from "node:path";
import { AppError, fail } from "../../http/errors.ts";

const outside = (): AppError => fail.badRequest("The path is outside MEDIA_DIR.");
const missing = (): AppError => new AppError("not_found", { message: "The file does not exist in MEDIA_DIR." });

/** Only a `..` segment leaves the root: a file named `..intro.mp3` inside it stays inside. */
function within(root: string, candidate: string): boolean {
  const rel = relative(root, candidate);
  return rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

const isMissing = (err: unknown): boolean => ["ENOENT", "ENOTDIR"].includes((err as NodeJS.ErrnoException).code ?? "");

export async function resolveMediaPath(mediaDir: string, requested: string): Promise<string> {
  if (requested.includes("\0")) throw fail.badRequest("The path is not valid.");
  let root: string;
  try {
    root = await realpath(mediaDir);
  } catch (err) {
    if (isMissing(err)) throw missing();
    throw err;
  }
  const candidate = resolve(root, requested);
  if (!within(root, candidate)) throw outside();
  let real: string;
  try {
    real = await realpath(candidate);
  } catch (err) {
    if (!isMissing(err)) throw err;
    // A dangling link pointing out of MEDIA_DIR is an escape attempt, not a missing file; so is a
    // missing file under a linked folder outside it (else 400 or 404 would tell what exists there).
    const link = await lstat(candidate).catch(() => null);
    if (link?.isSymbolicLink() && !within(root, resolve(dirname(candidate), await readlink(candidate)))) throw outside();
    if (!within(root, await realAncestor(dirname(candidate)))) throw outside();
    throw missing();
  }
  if (!within(root, real)) throw outside();
  const info = await stat(real);
  if (!info.isFile()) throw fail.badRequest("The path does not name a file.");
  return real;
}

/** The realpath of the nearest folder of `path` that exists (the root `/` at worst). */
async function realAncestor(path: string): Promise<string> {
  for (let dir = path; ; dir = dirname(dir)) {
    const real = await realpath(dir).catch((err: unknown) => {
      if (isMissing(err)) return null;
      throw err;
    });
    if (real !== null || dir === dirname(dir)) return real ?? dir;
  }
}
