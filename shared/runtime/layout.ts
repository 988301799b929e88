/**
 * Where the files the service reads beside its code live, run from the TypeScript sources (tsx)
 * and from the build (`make build`: dist/control.js and dist/worker.js) alike. From the sources
 * this module is shared/runtime/layout.ts; built, it is inlined into a bundle under dist/. Either
 * way the project root is the nearest folder above it that holds a package.json, and files the
 * service reads at run time (package.json, prisma/migrations, the common-password list) are
 * found at their place under that root.
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(import.meta.url);

/** True when running the JavaScript of `make build`, false under tsx. */
export const BUILT = !here.endsWith(".ts");

/** The folder of the running bundle (dist/) when built; the sources' root otherwise. */
const codeDir = dirname(here);

function findRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${start}`);
  }
}

export const PROJECT_ROOT = findRoot(codeDir);

/** A path under the project root, e.g. `projectPath("prisma", "migrations")`. */
export function projectPath(...segments: string[]): string {
  return join(PROJECT_ROOT, ...segments);
}

/**
 * The module to run as an entry point: `built` (a file name beside the running bundle) when
 * built, `source` (relative to the root) under tsx.
 */
export function entryPath(source: string, built: string): string {
  return BUILT ? join(codeDir, built) : projectPath(source);
}
