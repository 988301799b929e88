import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { test } from "node:test";
import { createLogger } from "../../shared/log/logger.ts";
import { spawnChild } from "../../shared/process/child.ts";
import { groupMembers, isAlive, killProcessGroup, waitForExit } from "../../shared/process/group.ts";

function capturingLogger(): { logger: ReturnType<typeof createLogger>; lines: () => Record<string, unknown>[] } {
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on("data", (c: Buffer) => chunks.push(c.toString()));
  const logger = createLogger({ level: "debug", destination: stream });
  const lines = () =>
    chunks
      .join("")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { logger, lines };
}

test("a child's output is logged line by line with its pid and stderr is kept", async () => {
  const { logger, lines } = capturingLogger();
  const child = spawnChild({
    command: "sh",
    args: ["-c", "echo out-1; echo err-1 >&2; echo err-2 >&2; exit 3"],
    logger,
    name: "sh",
  });
  const exit = await child.exited;
  assert.deepEqual(exit, { code: 3, signal: null });
  // 'exit' can come before the last lines are read: finalStderrTail waits for stderr's end.
  assert.deepEqual(await child.finalStderrTail(), ["err-1", "err-2"]);
  const logged = lines().filter((l) => l.child_pid === child.pid);
  assert.ok(logged.some((l) => l.msg === "out-1" && l.stream === "stdout"));
  assert.ok(logged.some((l) => l.msg === "err-2" && l.stream === "stderr"));
});

test("finalStderrTail has a child's last line whenever it exits, and does not wait on a grandchild holding stderr", async (t) => {
  const { logger } = capturingLogger();
  // Many short-lived children: 'exit' and the last stderr bytes race, and the tail must not lose.
  for (let i = 0; i < 20; i++) {
    const child = spawnChild({ command: "sh", args: ["-c", `echo first >&2; echo "last ${i}" >&2; exit 1`], logger, name: "sh" });
    assert.deepEqual(await child.finalStderrTail(), ["first", `last ${i}`]);
  }
  // A grandchild that keeps stderr open past the exit: the wait is bounded (STDERR_AFTER_EXIT_MS).
  const holder = spawnChild({ command: "sh", args: ["-c", "sleep 60 & echo gone >&2; exit 0"], logger, name: "sh" });
  t.after(() => killProcessGroup(holder.pid));
  assert.deepEqual(await holder.finalStderrTail(), ["gone"]);
  assert.ok((await groupMembers(holder.pid)).length > 0, "the grandchild is still there, holding stderr");
});

test("keepInTail keeps a chatty child's errors in its tail; every line still reaches the log and onStderrLine", async () => {
  const { logger, lines } = capturingLogger();
  const seen: string[] = [];
  const script = "echo 'E: broken' >&2; i=0; while [ $i -lt 30 ]; do echo \"D: chatter $i\" >&2; i=$((i+1)); done";
  const child = spawnChild({ command: "sh", args: ["-c", script], logger, name: "sh", keepInTail: (line) => !line.startsWith("D: "), onStderrLine: (line) => seen.push(line) });
  await child.exited;
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.deepEqual(child.stderrTail(), ["E: broken"]);
  assert.equal(seen.length, 31);
  assert.equal(lines().filter((l) => l.child_pid === child.pid && l.stream === "stderr").length, 31);
});

test("stop() SIGKILLs a group that ignores SIGTERM, grandchildren included", async (t) => {
  const logger = createLogger({ level: "warn" });
  // The shell ignores TERM and has a grandchild: only a SIGKILL to the group ends both.
  const child = spawnChild({
    command: "sh",
    args: ["-c", "trap '' TERM; sleep 300 & echo started; wait"],
    logger,
    name: "stubborn",
    onStdoutLine: (l) => l === "started" && started(),
  });
  let started!: () => void;
  await new Promise<void>((resolve) => (started = resolve));
  t.after(() => child.stop({ signal: "SIGKILL", group: true, timeoutMs: 0 }));
  const members = await groupMembers(child.pid);
  assert.ok(members.length >= 2, `expected sh and sleep in the group, got ${members.join(",")}`);

  const [first, second] = await Promise.all([
    child.stop({ signal: "SIGTERM", timeoutMs: 300 }),
    child.stop({ signal: "SIGTERM", timeoutMs: 300 }), // idempotent: same outcome, one kill
  ]);
  assert.equal(first.signal, "SIGKILL");
  assert.deepEqual(second, first);
  for (const pid of members) assert.ok(await waitForExit(pid, 3_000), `pid ${pid} survived`);
});

test("a graceful stop needs no SIGKILL, and stop after exit is a no-op", async () => {
  const logger = createLogger({ level: "warn" });
  const child = spawnChild({ command: "sleep", args: ["300"], logger, name: "sleep" });
  const exit = await child.stop({ timeoutMs: 5_000 });
  assert.equal(exit.signal, "SIGTERM");
  assert.equal(await isAlive(child.pid), false);
  assert.deepEqual(await child.stop(), exit);
});

test("a command that cannot be spawned throws instead of crashing the process", () => {
  const logger = createLogger({ level: "silent" });
  assert.throws(() => spawnChild({ command: "/nonexistent/binary", args: [], logger, name: "missing" }));
});
