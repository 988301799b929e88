/**
 * Turns to start Chromium (control/bot/supervisor/launch-gate.ts, issue #20): no more workers
 * start their browser at once than the gate allows, first come first served, and a turn comes
 * back when its worker says `done` or exits (a SIGKILLed worker must not keep it). Real forked
 * workers over the real IPC protocol (test/bot/fixtures/turn-worker.ts).
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { describe, test } from "node:test";
import { createLaunchGate } from "../../control/bot/supervisor/launch-gate.ts";
import { forkWorker, type WorkerProcess } from "../../control/bot/supervisor/worker-process.ts";
import { createLogger } from "../../shared/log/logger.ts";

const TURN_WORKER = fileURLToPath(new URL("./fixtures/turn-worker.ts", import.meta.url));

describe("launch gate", () => {
  test("turns in order of asking; a done or a waiting worker's leaving hands them on", () => {
    const gate = createLaunchGate(2, 600_000);
    const went: number[] = [];
    for (const key of [1, 2, 3, 4, 5]) gate.want(key, () => went.push(key));
    assert.deepEqual(went, [1, 2]);
    assert.equal(gate.waiting, 3);
    gate.done(4); // gone while waiting: loses its place, frees nothing
    assert.deepEqual(went, [1, 2]);
    gate.done(1);
    assert.deepEqual(went, [1, 2, 3]);
    gate.done(1); // twice: nothing more
    gate.want(3, () => went.push(99)); // asked again while in its turn: ignored
    gate.done(2);
    assert.deepEqual(went, [1, 2, 3, 5]);
    assert.equal(gate.starting, 2);
    assert.equal(gate.waiting, 0);
  });

  test("a turn held past its limit lets the next worker go", async () => {
    const gate = createLaunchGate(1, 50);
    const went: number[] = [];
    gate.want(1, () => went.push(1));
    gate.want(2, () => went.push(2));
    assert.deepEqual(went, [1]);
    while (went.length < 2) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(went, [1, 2]);
    gate.done(1); // its late done frees nothing more
    assert.equal(gate.starting, 1);
    gate.done(2);
    assert.equal(gate.starting, 0);
  });

  test("0 gives one turn per CPU core", async () => {
    const { availableParallelism } = await import("node:os");
    const gate = createLaunchGate(0);
    let went = 0;
    for (let key = 1; key <= availableParallelism() + 1; key++) gate.want(key, () => went++);
    assert.equal(went, availableParallelism());
  });

  test("forked workers: two turns among four, given back by done and by SIGKILL", { timeout: 60_000 }, async (t) => {
    // Turns that never run out on their own here: only done and exits end them.
    const gate = createLaunchGate(2, 600_000);
    const logger = createLogger({ level: "silent" });
    const inTurn: number[] = [];
    let changed: () => void = () => undefined;
    const workers: WorkerProcess[] = [];
    const exited = new Map<number, Promise<void>>();
    for (let i = 0; i < 4; i++) {
      let resolveExit!: () => void;
      const exit = new Promise<void>((r) => (resolveExit = r));
      const w = forkWorker({
        modulePath: TURN_WORKER,
        execArgv: ["--import", "tsx"],
        sessionId: `turn-${i}`,
        marker: `/tmp/launch-gate-test-${process.pid}-${i}`,
        logger,
        launchGate: gate,
        onMessage: (m) => {
          if (m.type === "ready") {
            inTurn.push(w.pid);
            changed();
          }
        },
        onExit: () => resolveExit(),
        onHung: () => undefined,
      });
      workers.push(w);
      exited.set(w.pid, exit);
    }
    t.after(() => workers.forEach((w) => w.kill()));
    const until = async (what: string, ok: () => boolean): Promise<void> => {
      const deadline = Date.now() + 30_000;
      while (!ok()) {
        if (Date.now() > deadline) throw new Error(`${what}: in turn ${JSON.stringify(inTurn)}, starting ${gate.starting}, waiting ${gate.waiting}`);
        await new Promise<void>((r) => {
          changed = r;
          setTimeout(r, 100);
        });
      }
    };
    await until("two in their turn, two waiting", () => inTurn.length === 2 && gate.waiting === 2);
    assert.equal(gate.starting, 2);

    // One says done (its Chromium is up): the next one's turn.
    const first = workers.find((w) => w.pid === inTurn[0])!;
    first.send({ type: "stop", reason: "stopped_by_api" });
    await until("a third after a done", () => inTurn.length === 3);
    // One is killed in its turn: the turn is not lost with it.
    const second = workers.find((w) => w.pid === inTurn[1])!;
    second.kill();
    await exited.get(second.pid);
    await until("the fourth after a SIGKILL", () => inTurn.length === 4);
    assert.equal(new Set(inTurn).size, 4);
    assert.equal(gate.waiting, 0);
  });
});
