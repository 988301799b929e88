// The worker's heartbeat keeps its journal's modification time current while it runs, and stops.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { test } from "node:test";
import { startHeartbeat } from "../../worker/session/heartbeat.ts";

test("the heartbeat touches the journal until it is stopped", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "heartbeat-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, "s.journal");
  writeFileSync(path, "");
  const old = new Date(Date.now() - 3_600_000);
  utimesSync(path, old, old);
  const heartbeat = startHeartbeat(path, 20);
  for (let i = 0; i < 250 && statSync(path).mtimeMs < Date.now() - 60_000; i++) await sleep(20);
  heartbeat.stop();
  assert.ok(statSync(path).mtimeMs > Date.now() - 60_000, "touched");
  await sleep(100); // a touch already in flight lands
  utimesSync(path, old, old);
  await sleep(100);
  assert.equal(statSync(path).mtimeMs, old.getTime(), "not touched once stopped");
});
