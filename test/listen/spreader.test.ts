/**
 * How the control plane spreads the worker's bursts of audio (control/bot/listen/spreader.ts):
 * four frames at once leave as two and two, 40 ms apart; nothing is lost, reordered or held past
 * the next burst or the stream's end; the streams of one session share one wake-up
 * (control/bot/listen/spread-clock.ts). The clock is node:test's, so the schedule is exact.
 */
import assert from "node:assert/strict";
import { test, type TestContext } from "node:test";
import { COALESCE_MS, SpreadClock } from "../../control/bot/listen/spread-clock.ts";
import { FrameSpreader, SECOND_HALF_MS } from "../../control/bot/listen/spreader.ts";

const frames = (...ns: number[]): Buffer[] => ns.map((n) => Buffer.from([n]));

function harness(t: TestContext) {
  t.mock.timers.enable({ apis: ["setTimeout", "Date"] });
  const clock = new SpreadClock();
  const out: number[][] = [];
  const spreader = new FrameSpreader((f) => out.push(f.map((b) => b[0] as number)), { clock, atOnce: 2 });
  return { spreader, out, clock };
}

test("a burst of four leaves as two now and two 40 ms later", (t) => {
  const { spreader, out } = harness(t);
  spreader.push(frames(1, 2, 3, 4));
  assert.deepEqual(out, [[1, 2]]);
  t.mock.timers.tick(SECOND_HALF_MS - 1);
  assert.deepEqual(out, [[1, 2]]);
  t.mock.timers.tick(1);
  assert.deepEqual(out, [[1, 2], [3, 4]]);
  assert.equal(SECOND_HALF_MS, 40);
});

test("one or two frames go at once", (t) => {
  const { spreader, out } = harness(t);
  spreader.push(frames(1));
  spreader.push(frames(2, 3));
  spreader.push([]);
  assert.deepEqual(out, [[1], [2, 3]]);
});

test("an odd burst sends its larger half first", (t) => {
  const { spreader, out } = harness(t);
  spreader.push(frames(1, 2, 3));
  t.mock.timers.tick(SECOND_HALF_MS);
  spreader.push(frames(4, 5, 6, 7, 8));
  t.mock.timers.tick(SECOND_HALF_MS);
  assert.deepEqual(out, [[1, 2], [3], [4, 5, 6], [7, 8]]);
});

test("a burst that comes before the last one's second half sends that half first, in order", (t) => {
  const { spreader, out } = harness(t);
  spreader.push(frames(1, 2, 3, 4));
  t.mock.timers.tick(10);
  spreader.push(frames(5, 6, 7, 8));
  assert.deepEqual(out, [[1, 2], [3, 4], [5, 6]]);
  // The first burst's timer is gone: nothing goes twice, the second burst's half waits its 40 ms.
  t.mock.timers.tick(SECOND_HALF_MS - 1);
  assert.deepEqual(out, [[1, 2], [3, 4], [5, 6]]);
  t.mock.timers.tick(1);
  assert.deepEqual(out, [[1, 2], [3, 4], [5, 6], [7, 8]]);
});

test("flush at the stream's end delivers what waits; stop drops it", (t) => {
  const { spreader, out, clock } = harness(t);
  spreader.push(frames(1, 2, 3, 4));
  spreader.flush();
  assert.deepEqual(out, [[1, 2], [3, 4]]);
  spreader.push(frames(5, 6, 7, 8));
  spreader.stop();
  assert.equal(clock.size, 0);
  t.mock.timers.tick(SECOND_HALF_MS * 2);
  assert.deepEqual(out, [[1, 2], [3, 4], [5, 6]]);
});

test("streams whose halves fall due together share one wake-up; a later one keeps its own time", (t) => {
  const { clock } = harness(t);
  const out: string[] = [];
  const stream = (name: string) => new FrameSpreader((f) => out.push(`${name}${f.map((b) => b[0]).join("")}`), { clock, atOnce: 2 });
  const [a, b, c] = [stream("a"), stream("b"), stream("c")];
  let wakes = 0;
  const fire = setTimeout;
  // Counts the clock's timers as node:test's clock fires them.
  t.mock.method(globalThis, "setTimeout", (fn: () => void, ms: number) => fire(() => (wakes++, fn()), ms));
  a.push(frames(1, 2, 3, 4));
  t.mock.timers.tick(COALESCE_MS - 1);
  b.push(frames(1, 2, 3, 4));
  t.mock.timers.tick(20);
  c.push(frames(1, 2, 3, 4));
  out.length = 0;
  t.mock.timers.tick(SECOND_HALF_MS - 20 - (COALESCE_MS - 1));
  assert.deepEqual(out, ["a34", "b34"], "a's wake-up takes b's half, due within COALESCE_MS of it");
  assert.equal(wakes, 1);
  t.mock.timers.tick(20 + COALESCE_MS);
  assert.deepEqual(out, ["a34", "b34", "c34"]);
  assert.equal(wakes, 2);
  assert.equal(clock.size, 0);
});
