// The worker as a warm worker (issue #20): `warm` → PulseAudio and Chromium up → `warmed`; no
// init deadline; a stop, or the supervisor going away, before `init` closes everything and exits
// 0 leaving no process and no folder.
import assert from "node:assert/strict";
import { fork, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test, type TestContext } from "node:test";
import { fromWorkerSchema, type FromWorker } from "../../shared/ipc/messages.ts";
import { survivorsMentioning } from "../helpers/audio/leftovers.ts";
import { holdMediaLock } from "../harness/media-lock.ts";

await holdMediaLock();

const WORKER_ENTRY = new URL("../../worker/main.ts", import.meta.url).pathname;

function startWarm(t: TestContext): { child: ChildProcess; workDir: string; messages: FromWorker[]; exited: Promise<number | null>; next: (type: FromWorker["type"]) => Promise<FromWorker> } {
  const root = mkdtempSync(join(tmpdir(), "warm-test-"));
  const workDir = join(root, `${randomUUID()}.work`);
  const child = fork(WORKER_ENTRY, [`--session-dir=${workDir}`], { execArgv: ["--import", "tsx"], stdio: ["ignore", "ignore", "ignore", "ipc"] });
  t.after(() => void (child.exitCode === null && child.kill("SIGKILL")));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const messages: FromWorker[] = [];
  child.on("message", (raw) => {
    const message = fromWorkerSchema.parse(raw);
    messages.push(message);
    if (message.type === "launchTurn" && message.phase === "want") child.send({ type: "launchGo" });
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const next = async (type: FromWorker["type"]) => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const found = messages.find((m) => m.type === type);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no ${type}; got ${JSON.stringify(messages)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  child.send({ type: "warm", sessionId: randomUUID(), workDir, mic: false, chromiumPath: "/usr/bin/chromium", logLevel: "warn" });
  return { child, workDir, messages, exited, next };
}

test("warm → warmed with Chromium and PulseAudio; stop before init closes them and exits 0", { timeout: 90_000 }, async (t) => {
  const w = startWarm(t);
  const warmed = await w.next("warmed");
  assert.ok(warmed.type === "warmed" && warmed.pids.chromium && warmed.pids.pulseaudio, JSON.stringify(warmed));
  assert.ok((await survivorsMentioning(w.workDir, 0)).some((p) => p.includes("chromium")));
  // Chromium started in its turn, which it gave back once up (before `warmed`).
  const order = w.messages.map((m) => (m.type === "launchTurn" ? `turn:${m.phase}` : m.type)).filter((x) => x !== "pong");
  assert.deepEqual(order.slice(0, 3), ["turn:want", "turn:done", "warmed"]);
  w.child.send({ type: "stop", reason: "shutdown" });
  assert.equal(await w.exited, 0);
  assert.deepEqual(await survivorsMentioning(w.workDir), []);
  assert.equal(existsSync(w.workDir), false, "the folder is removed");
  assert.equal(w.messages.filter((m) => m.type === "initFailed").length, 0);
});

test("the supervisor going away from a warm worker: it closes everything and exits", { timeout: 90_000 }, async (t) => {
  const w = startWarm(t);
  await w.next("warmed");
  w.child.disconnect();
  assert.equal(await w.exited, 0);
  assert.deepEqual(await survivorsMentioning(w.workDir), []);
});
