// The page tap's check against the sink (worker/listen/page-tap/cross-check.ts), as a rule: when
// the sink's sound means the page tap missed something, and when it does not.
import assert from "node:assert/strict";
import { test } from "node:test";
import { pageTapMisses } from "../../worker/listen/page-tap/cross-check.ts";
import { rmsDbfs, type LevelBlock } from "../../worker/audio/sink-level.ts";

/** Sink blocks of 250 ms ending at `now`, loud (-20 dBFS) where `loud(i)` (i counts back from now). */
const sink = (now: number, count: number, loud: (i: number) => boolean): LevelBlock[] =>
  Array.from({ length: count }, (_, k) => count - 1 - k).map((i) => ({ at: now - i * 250, dbfs: loud(i) ? -20 : -Infinity }));

test("a loud sink and a page tap silent for 4 s: missed", () => {
  const now = 100_000;
  assert.equal(pageTapMisses({ now, servingSince: now - 10_000, pageAudibleAt: -Infinity, sink: sink(now, 8, () => true) }), true);
  assert.equal(pageTapMisses({ now, servingSince: now - 10_000, pageAudibleAt: now - 4_500, sink: sink(now, 8, () => true) }), true);
  // Half of the last two seconds is enough (a speaker's pauses).
  assert.equal(pageTapMisses({ now, servingSince: now - 10_000, pageAudibleAt: -Infinity, sink: sink(now, 8, (i) => i % 2 === 0) }), true);
});

test("not missed: the page tap heard sound lately, serves since less than 4 s, or the sink is (mostly) quiet", () => {
  const now = 100_000;
  const loud = sink(now, 8, () => true);
  // The sink hears the page ~0.5 s late: the page's last sound 3.9 s ago can still be in it.
  assert.equal(pageTapMisses({ now, servingSince: now - 10_000, pageAudibleAt: now - 3_900, sink: loud }), false);
  assert.equal(pageTapMisses({ now, servingSince: now - 3_000, pageAudibleAt: -Infinity, sink: loud }), false);
  assert.equal(pageTapMisses({ now, servingSince: now - 10_000, pageAudibleAt: -Infinity, sink: sink(now, 8, (i) => i < 3) }), false);
  assert.equal(pageTapMisses({ now, servingSince: now - 10_000, pageAudibleAt: -Infinity, sink: [] }), false);
  // Comfort noise (-70 dBFS) is not sound.
  const hiss = loud.map((b) => ({ ...b, dbfs: -70 }));
  assert.equal(pageTapMisses({ now, servingSince: now - 10_000, pageAudibleAt: -Infinity, sink: hiss }), false);
  // Sound older than two seconds does not count.
  assert.equal(pageTapMisses({ now, servingSince: now - 10_000, pageAudibleAt: -Infinity, sink: sink(now, 16, (i) => i >= 8) }), false);
});

test("a block's level is its RMS in dBFS", () => {
  const pcm = Buffer.alloc(1600);
  assert.equal(rmsDbfs(pcm), -Infinity);
  for (let i = 0; i < 800; i++) pcm.writeInt16LE(i % 2 === 0 ? 16384 : -16384, i * 2);
  assert.ok(Math.abs(rmsDbfs(pcm) - 20 * Math.log10(0.5)) < 0.01);
});
