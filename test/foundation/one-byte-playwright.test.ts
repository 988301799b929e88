/**
 * The one-byte copy of Playwright that workers load (control/bot/supervisor/one-byte-playwright.ts):
 * its two bundles are ASCII only (V8 then keeps their source at one byte a character), every other
 * file is the package's own, two writers at once both get a whole copy, and a copy that is there
 * is reused. Loading it and driving a real Chromium through it: test/build/built-server.test.ts
 * and every suite that forks a bundled worker.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { after, test } from "node:test";
import { oneByteName, playwrightPackage, writeOneBytePlaywright } from "../../control/bot/supervisor/one-byte-playwright.ts";

const ROOT = resolve(import.meta.dirname, "../..");
mkdirSync(join(ROOT, ".tmp"), { recursive: true });
// Inside the project: the same filesystem as node_modules, so files are linked as in use.
const parent = mkdtempSync(join(ROOT, ".tmp", "one-byte-"));
after(() => rmSync(parent, { recursive: true, force: true }));

const wide = (text: string) => (text.match(/[\u0100-\uffff]/g) ?? []).length;

function files(dir: string, prefix = ""): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? files(join(dir, d.name), `${prefix}${d.name}/`) : [`${prefix}${d.name}`]));
}

test("two writers at once: one whole copy, its bundles one-byte, the rest the package's own files", async () => {
  const [a, b] = await Promise.all([writeOneBytePlaywright(parent), writeOneBytePlaywright(parent)]);
  const { dir, version } = playwrightPackage();
  const copy = join(parent, oneByteName(version));
  assert.equal(a, join(copy, "index.mjs"));
  assert.equal(b, a);
  assert.deepEqual(readdirSync(parent), [oneByteName(version)], "no temporary folder is left");
  assert.deepEqual(files(copy).sort(), files(dir).sort());
  for (const bundle of ["lib/coreBundle.js", "lib/utilsBundle.js"]) {
    const original = readFileSync(join(dir, bundle), "utf8");
    const rewritten = readFileSync(join(copy, bundle), "utf8");
    assert.ok(wide(original) > 0, `${bundle} of this Playwright has characters beyond Latin-1 (else the copy is pointless)`);
    assert.equal(wide(rewritten), 0, bundle);
    assert.ok(rewritten.length < original.length * 0.9, `${bundle}: ${rewritten.length} of ${original.length}`);
  }
  const linked = statSync(join(copy, "index.js"));
  assert.equal(linked.ino, statSync(join(dir, "index.js")).ino, "the package's other files are hard links");
});

test("a copy that is there is reused as it is", async () => {
  const entry = await writeOneBytePlaywright(parent);
  const bundle = join(entry, "..", "lib", "coreBundle.js");
  const before = statSync(bundle).mtimeMs;
  assert.equal(await writeOneBytePlaywright(parent), entry);
  assert.equal(statSync(bundle).mtimeMs, before);
});

test("the copy loads in plain Node and offers what the worker uses, in less heap than the package", async () => {
  const entry = await writeOneBytePlaywright(parent);
  const heapAfterImport = (specifier: string) => {
    const script = `const m = await import(${JSON.stringify(specifier)}); globalThis.gc(); const u = process.memoryUsage().heapUsed; console.log(JSON.stringify({ launch: typeof m.chromium.launchPersistentContext, heap: u }));`;
    return JSON.parse(execFileSync(process.execPath, ["--expose-gc", "--input-type=module", "-e", script], { cwd: ROOT, encoding: "utf8" })) as { launch: string; heap: number };
  };
  const copy = heapAfterImport(entry);
  const original = heapAfterImport("playwright-core");
  assert.equal(copy.launch, "function");
  // Heap is deterministic enough after a full GC in a fresh process: the sources alone differ by ~9 MB.
  assert.ok(original.heap - copy.heap > 4 * 2 ** 20, `heap ${copy.heap} with the copy, ${original.heap} with the package`);
});
