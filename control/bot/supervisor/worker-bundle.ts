/**
 * The worker's entry as plain JavaScript. Forking the TypeScript entry through tsx made every
 * worker load tsx and transpile its module graph before it could even read `init`: 1.1 s of CPU
 * per boot with playwright-core, against 0.6 s for one esbuild bundle on bare Node (measured;
 * with 8 meetings starting on 2 cores that is seconds of join time). So the control plane
 * bundles each worker entry once, on first use, and forks the bundle.
 *
 * Packages stay external and load from node_modules, which is why the bundle is written under
 * node_modules/.cache (bare imports resolve from there). Its name is the hash of its content, so
 * control planes sharing a tree never overwrite each other's file with different code. Any
 * failure (a read-only tree, an esbuild error) falls back to forking the entry through tsx.
 * The bundle loads the one-byte copy of Playwright written beside it (one-byte-playwright.ts),
 * or the package itself when the copy cannot be written.
 *
 * This is for development: in production the control plane runs from dist/ (`make build`) and
 * forks dist/worker.js, bundled ahead of time.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, rename, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { Logger } from "../../../shared/log/logger.ts";
import { playwrightFrom, writeOneBytePlaywright } from "./one-byte-playwright.ts";

export interface WorkerEntry {
  /** What to fork. */
  modulePath: string;
  /** Node options of the fork. */
  execArgv: string[];
}

/** The TypeScript entry, run through tsx: always works, slower to start. */
const viaTsx = (modulePath: string): WorkerEntry => ({ modulePath, execArgv: ["--import", "tsx"] });

const bundles = new Map<string, Promise<WorkerEntry>>();

/** The entry to fork for `modulePath`, bundled once per process (memoised, never rejects). */
export function workerEntry(modulePath: string, logger: Logger): Promise<WorkerEntry> {
  // JavaScript already: the built worker (`make build`) maps its stack traces with the .map beside it.
  if (!modulePath.endsWith(".ts")) return Promise.resolve({ modulePath, execArgv: existsSync(`${modulePath}.map`) ? ["--enable-source-maps"] : [] });
  let entry = bundles.get(modulePath);
  if (!entry) {
    entry = bundle(modulePath, logger).catch((err: unknown) => {
      logger.warn({ err, modulePath }, "could not bundle the worker; forking it through tsx");
      return viaTsx(modulePath);
    });
    bundles.set(modulePath, entry);
  }
  return entry;
}

async function bundle(modulePath: string, logger: Logger): Promise<WorkerEntry> {
  const cacheDir = join(nodeModulesOf(modulePath), ".cache", "toamaisutaa-worker");
  const playwright = await writeOneBytePlaywright(cacheDir).catch((err: unknown) => {
    logger.warn({ err }, "could not write the one-byte copy of Playwright; workers load the package itself");
    return undefined;
  });
  const { build } = await import("esbuild");
  const result = await build({
    entryPoints: [modulePath],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    plugins: playwright ? [playwrightFrom(playwright)] : [],
    write: false,
    outdir: cacheDir,
    // Stack traces in the logs name the TypeScript sources (--enable-source-maps below).
    sourcemap: "inline",
    sourcesContent: false,
    logLevel: "silent",
  });
  const code = result.outputFiles.find((f) => f.path.endsWith(".js"))?.contents;
  if (!code) throw new Error("esbuild produced no JavaScript");
  const hash = createHash("sha256").update(code).digest("hex").slice(0, 16);
  const out = join(cacheDir, `${basename(modulePath, ".ts")}-${hash}.mjs`);
  if (!existsSync(out)) {
    await mkdir(cacheDir, { recursive: true });
    // Written aside and renamed: a concurrent fork never sees half a file.
    const tmp = `${out}.${process.pid}.tmp`;
    await writeFile(tmp, code);
    await rename(tmp, out);
  }
  return { modulePath: out, execArgv: ["--enable-source-maps"] };
}

/** The node_modules the entry's packages resolve from: the nearest one above it. */
function nodeModulesOf(modulePath: string): string {
  for (let dir = dirname(modulePath); ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules");
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) throw new Error(`no node_modules above ${modulePath}`);
  }
}
