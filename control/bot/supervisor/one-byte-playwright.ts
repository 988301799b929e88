/**
 * A copy of playwright-core that costs every worker 9 MB less heap.
 *
 * Playwright ships as two bundles (lib/coreBundle.js and lib/utilsBundle.js, 7 MB) that a worker
 * loads whole. A few dozen non-ASCII characters in their comments make V8 keep each source as a
 * two-byte string, and V8 keeps every script's source for as long as the script lives: 14 MB of
 * each worker's heap. The copy has the same code printed by esbuild as ASCII only, without
 * comments or indentation, so both sources are one-byte strings of 5 MB in all. Measured on
 * importing the package (2 runs each, Node 24): heap used 35.7 -> 27.0 MB, RSS 113 -> 105 MB,
 * import 245 -> 220 ms.
 *
 * Every other file is hard-linked (copied where links fail), so the copy costs no disk on the
 * same filesystem. Workers import it through their bundle (worker-bundle.ts, scripts/build.ts
 * resolve `playwright-core` to it); code that runs under tsx keeps the package itself.
 */
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { copyFile, link, mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Plugin } from "esbuild";

/** The bundles rewritten; the rest of the package is linked as it is. */
const REWRITTEN = ["lib/coreBundle.js", "lib/utilsBundle.js"];
/** Bump when the rewriting changes, so a cached copy made the old way is not reused. */
const FORMAT = 1;

/** The installed package's folder and version. */
export function playwrightPackage(): { dir: string; version: string } {
  const require = createRequire(import.meta.url);
  const manifest = require.resolve("playwright-core/package.json");
  const { version } = require(manifest) as { version: string };
  return { dir: dirname(manifest), version };
}

/** The copy's folder name for this version and format, e.g. `playwright-core-1.65.1-onebyte1`. */
export function oneByteName(version: string): string {
  return `playwright-core-${version}-onebyte${FORMAT}`;
}

/**
 * Writes the copy as `<parent>/<oneByteName>` unless it is there already, and returns the path
 * of its ES entry (index.mjs). Built aside and renamed into place: a process that finds the
 * folder finds it whole, and of two processes writing at once one rename wins.
 */
export async function writeOneBytePlaywright(parent: string): Promise<string> {
  const { dir: from, version } = playwrightPackage();
  const to = join(parent, oneByteName(version));
  const entry = join(to, "index.mjs");
  if (existsSync(entry)) return entry;
  const tmp = `${to}.${process.pid}-${randomBytes(4).toString("hex")}.tmp`;
  try {
    await linkTree(from, tmp, new Set(REWRITTEN.map((f) => join(from, f))));
    const { transform } = await import("esbuild");
    for (const file of REWRITTEN) {
      const source = await readFile(join(from, file), "utf8");
      const { code } = await transform(source, { loader: "js", charset: "ascii", minifyWhitespace: true, logLevel: "silent" });
      // One character beyond Latin-1 (in a legal comment, say) would make V8 widen the whole source.
      if (/[\u0100-\uffff]/.test(code)) throw new Error(`${file}: a character beyond Latin-1 is left`);
      await writeFile(join(tmp, file), code);
    }
    await rename(tmp, to).catch(async (err: NodeJS.ErrnoException) => {
      if (!existsSync(entry)) throw err; // another process put its copy in place first
    });
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
  return entry;
}

/** `from`'s tree under `to`, each file a hard link (a copy where linking fails), but `skip`. */
async function linkTree(from: string, to: string, skip: Set<string>): Promise<void> {
  await mkdir(to, { recursive: true });
  for (const item of await readdir(from, { withFileTypes: true })) {
    const source = join(from, item.name);
    const target = join(to, item.name);
    if (item.isDirectory()) await linkTree(source, target, skip);
    else if (item.isFile() && !skip.has(source)) await link(source, target).catch(() => copyFile(source, target));
  }
}

/** An esbuild plugin: the bundle's `playwright-core` imports load `entry` (kept external) instead. */
export function playwrightFrom(entry: string): Plugin {
  return {
    name: "one-byte-playwright",
    setup(build) {
      build.onResolve({ filter: /^playwright-core$/ }, () => ({ path: entry, external: true }));
    },
  };
}
