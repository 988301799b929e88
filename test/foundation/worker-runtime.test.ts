/**
 * A forked meeting worker runs with the Node flags and the glibc setting chosen by measurement
 * (control/bot/supervisor/worker-process.ts): a real child through forkWorker reports its own.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "node:test";
import { forkWorker, WORKER_ENV, WORKER_NODE_FLAGS } from "../../control/bot/supervisor/worker-process.ts";
import { captureLogs } from "../harness/logs.ts";

const CHILD = fileURLToPath(new URL("./fixtures/runtime-child.ts", import.meta.url));

test("a worker gets one malloc arena, its V8 flags and the compile cache, whatever the control plane's environment", async (t) => {
  const before = process.env.MALLOC_ARENA_MAX;
  process.env.MALLOC_ARENA_MAX = "8";
  const cache = join(mkdtempSync(join(tmpdir(), "worker-runtime-")), "compile-cache");
  t.after(() => rmSync(join(cache, ".."), { recursive: true, force: true }));
  const logs = captureLogs("info");
  try {
    await new Promise<void>((resolve) => {
      forkWorker({
        modulePath: CHILD,
        execArgv: ["--import", "tsx"],
        sessionId: "00000000-0000-4000-8000-000000000002",
        marker: "runtime-child-test",
        logger: logs.logger,
        compileCacheDir: cache,
        onMessage: () => undefined,
        onExit: () => resolve(),
        onHung: () => undefined,
      });
    });
  } finally {
    if (before === undefined) delete process.env.MALLOC_ARENA_MAX;
    else process.env.MALLOC_ARENA_MAX = before;
  }
  // stdout may deliver its last lines just after 'exit'.
  await new Promise((r) => setTimeout(r, 200));
  const line = logs.lines.map((l) => JSON.parse(l) as { msg: string; malloc_arena_max?: string; exec_argv?: string[]; compile_cache?: string | null }).find((l) => l.msg === "runtime");
  const compiled = line?.compile_cache;
  assert.ok(line, logs.lines.join("\n"));
  assert.equal(line.malloc_arena_max, WORKER_ENV.MALLOC_ARENA_MAX);
  assert.equal(line.malloc_arena_max, "1");
  for (const flag of WORKER_NODE_FLAGS) assert.ok(line.exec_argv?.includes(flag), `${flag} in ${JSON.stringify(line.exec_argv)}`);
  // Node keeps the cache in a folder of its version under the one given, written by the exit.
  assert.ok(compiled?.startsWith(cache), `compile cache ${compiled}`);
  assert.ok(readdirSync(compiled!).length > 0, "the worker left its compiled modules for the next one");
});
