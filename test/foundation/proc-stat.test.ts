/**
 * /proc/<pid>/stat parsing (shared/process/proc-stat.ts): a command name may hold spaces and
 * parentheses (Chromium's thread names, a renamed process), so fields count from the last ")";
 * and the CPU ticks read are this machine's real ones.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { cpuTicks, statFields, sumCpuTicks } from "../../shared/process/proc-stat.ts";

test("fields count from the last parenthesis of the command name", async (t) => {
  // A real process whose executable's name would break a split on the first ")" or on spaces.
  const dir = mkdtempSync(join(tmpdir(), "proc-stat-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const odd = join(dir, "a) S 9 (b");
  copyFileSync("/bin/sleep", odd);
  const child = spawn(odd, ["30"]);
  t.after(() => child.kill("SIGKILL"));
  await once(child, "spawn");
  const stat = readFileSync(`/proc/${child.pid}/stat`, "utf8");
  assert.match(stat, /\(a\) S 9 \(b\)/);
  const fields = statFields(stat);
  assert.match(fields[0] ?? "", /^[RSD]$/, "the state");
  assert.equal(Number(fields[1]), process.pid, "the parent");
});

test("CPU ticks move with the work a process does and read 0 or undefined once it is gone", async () => {
  const before = (await cpuTicks(process.pid)) ?? -1;
  const until = Date.now() + 300;
  let x = 0;
  while (Date.now() < until) x += Math.sqrt(x + 1);
  assert.ok(x > 0);
  const after = (await cpuTicks(process.pid)) ?? -1;
  assert.ok(after - before >= 10, `${before} → ${after} ticks after 300 ms of work`);
  const gone = spawn("true");
  await once(gone, "exit");
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(await cpuTicks(gone.pid ?? 0), undefined);
  assert.equal(await sumCpuTicks([gone.pid ?? 0]), 0);
  assert.ok((await sumCpuTicks([process.pid, gone.pid ?? 0])) >= after);
});
