/**
 * `make build`: the control plane and the worker as JavaScript, so production starts plain Node
 * (no tsx, no transpiling at start): dist/control.js (control/main.ts) and dist/worker.js
 * (worker/main.ts, which the built control plane forks; shared/runtime/layout.ts). Each is one
 * ES module bundle of our code, the Prisma clients included; npm packages stay external and load
 * from node_modules, but for Playwright, which loads from a one-byte copy written into the output
 * folder (control/bot/supervisor/one-byte-playwright.ts: 9 MB less heap per worker). Source maps
 * beside them name the TypeScript in stack traces
 * (`node --enable-source-maps`). The output folder is dist/ unless named as the argument; it must
 * lie inside the project (the bundles find the project root above themselves).
 */
import { rm } from "node:fs/promises";
import { basename, dirname } from "node:path";
import { build } from "esbuild";
import { playwrightFrom, writeOneBytePlaywright } from "../control/bot/supervisor/one-byte-playwright.ts";

const OUT = process.argv[2] ?? "dist";

await rm(OUT, { recursive: true, force: true });
const playwright = await writeOneBytePlaywright(OUT);
const result = await build({
  entryPoints: { control: "control/main.ts", worker: "worker/main.ts" },
  outdir: OUT,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node24",
  packages: "external",
  // Relative to the bundles, which sit beside the copy.
  plugins: [playwrightFrom(`./${basename(dirname(playwright))}/index.mjs`)],
  sourcemap: "linked",
  sourcesContent: false,
  metafile: true,
  logLevel: "warning",
});
for (const [file, output] of Object.entries(result.metafile.outputs)) {
  if (file.endsWith(".js")) console.log(`${file}  ${(output.bytes / 1024).toFixed(0)} KiB`);
}
