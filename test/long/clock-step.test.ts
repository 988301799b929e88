/**
 * Issue #15 "Monotonic clocks": the hung-worker watchdog measures silence on a monotonic clock.
 * The test steps this process's wall clock (Date) 60 s forward right after the fork, with a
 * worker that answers every ping; the watchdog must not call it hung. (Before: Date.now() said
 * 60 s without a pong, past the 15 s limit, and the session was killed and ended interrupted.)
 * The trim offset's side is in recovered-trim.test.ts ("stepped").
 */
import assert from "node:assert/strict";
import { mock, test } from "node:test";
import { forkWorker } from "../../control/bot/supervisor/worker-process.ts";
import { createLogger } from "../../shared/log/logger.ts";
import { FAKE_WORKER } from "../bot/fixtures/bot-app.ts";

test("a wall clock stepped 60 s forward does not make a live worker look hung", { timeout: 60_000 }, async (t) => {
  let hung = 0;
  let pongs = 0;
  mock.timers.enable({ apis: ["Date"], now: Date.now() });
  t.after(() => mock.timers.reset());
  const worker = forkWorker({
    modulePath: FAKE_WORKER,
    execArgv: ["--import", "tsx"],
    sessionId: "clock-step",
    marker: "/tmp/i15-clock-step",
    logger: createLogger({ level: "silent" }),
    onMessage: (m) => void (m.type === "pong" && pongs++),
    onExit: () => undefined,
    onHung: () => void hung++,
  });
  t.after(() => worker.kill());
  mock.timers.setTime(Date.now() + 60_000);
  // Two ping intervals (5 s each): the watchdog has looked twice.
  await new Promise((r) => setTimeout(r, 11_000));
  assert.equal(hung, 0, "the worker was called hung after a wall-clock step");
  assert.ok(pongs >= 1, "the worker answered pings meanwhile");
});
