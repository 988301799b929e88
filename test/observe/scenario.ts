/**
 * The scripted meeting of issue #17's "Done means", and the checks of a timeline against what the
 * fixture actually did (its log, epoch ms): every turn within ±0.5 s at both ends, the overlap
 * marked on both sides, nothing for the silent participant, nothing unattributed, join and leave
 * within ±2 s, names exactly as typed.
 */
import assert from "node:assert/strict";
import type { ScriptedPerson } from "../fixture/teams/participants.ts";

/** Quotes, emoji, and 200 characters in all: stored as shown. */
export const ODD_NAME = `Zoë "Zed" O'Hara 🎙️ ${"x".repeat(200)}`.slice(0, 200);

export const BOT_NAME = "Timeline Bot";

/** Seconds after admission. Ada and Grace overlap in [10, 11]; Grace leaves at 16; Katherine joins at 7. */
export const SCRIPT: ScriptedPerson[] = [
  { name: "Ada Lovelace", label: "Guest", frequency: 440, speak: [[2, 5], [9, 11]] },
  { name: "Grace Hopper", frequency: 660, speak: [[6, 8.5], [10, 12.5]], leaveAt: 16 },
  { name: "Katherine Johnson", label: "External", email: "katherine@nasa.example", frequency: 880, joinAt: 7, speak: [[13.5, 15.5]] },
  { name: ODD_NAME, frequency: 1200 },
];
/** The meeting runs this long after admission before the test stops the bot. */
export const SCRIPT_SECONDS = 19;

/**
 * `script` with every mid-meeting moment (joins, leaves, turns) `seconds` later: the same meeting
 * for a test that must be ready before anyone speaks (a live listener opens after the admission).
 */
export function delayScript(script: ScriptedPerson[], seconds: number): ScriptedPerson[] {
  return script.map((p) => ({
    ...p,
    ...(p.joinAt !== undefined && p.joinAt > 0 ? { joinAt: p.joinAt + seconds } : {}),
    ...(p.leaveAt !== undefined && p.leaveAt !== null ? { leaveAt: p.leaveAt + seconds } : {}),
    ...(p.speak ? { speak: p.speak.map(([a, b]): [number, number] => [a + seconds, b + seconds]) } : {}),
  }));
}

export interface FixtureLog {
  admittedAt: number | null;
  log: {
    presence: { name: string; joinedAt: number | null; leftAt: number | null }[];
    speech: { name: string; start: number; end: number | null }[];
  };
}

type Json = Record<string, unknown>;
interface Participant {
  id: string;
  name: string;
  label: string | null;
  self: boolean;
  joined_at: number | null;
  left_at: number | null;
}
interface Speech {
  participant_id: string | null;
  start: number;
  end: number;
  overlap: boolean;
}

export async function fixtureLog(fixtureUrl: string, meetingId: string): Promise<FixtureLog> {
  const res = await fetch(`${fixtureUrl}/_fixture/meetings/${meetingId}/people/log`);
  return (await res.json()) as FixtureLog;
}

/**
 * Checks `timeline` against the fixture's log of `script` (SCRIPT unless told). `until` (epoch
 * ms): only what happened before it is expected (a crash cuts the meeting short); turns running
 * at that moment may end early.
 */
export function assertTimeline(timeline: Json, fixture: FixtureLog, options: { until?: number; script?: ScriptedPerson[] } = {}): void {
  const script = options.script ?? SCRIPT;
  const until = options.until ?? Number.POSITIVE_INFINITY;
  const origin = Date.parse(String(timeline.started_at));
  assert.ok(Number.isFinite(origin), `started_at ${String(timeline.started_at)}`);
  const offset = (epoch: number) => (epoch - origin) / 1000;
  const participants = timeline.participants as Participant[];
  const speech = timeline.speech as Speech[];
  const byName = new Map(participants.map((p) => [p.name, p]));
  const why = JSON.stringify(timeline);

  const self = participants.filter((p) => p.self);
  assert.equal(self.length, 1, `one self entry: ${why}`);
  assert.equal(self[0]?.name, BOT_NAME);
  assert.equal(new Set(participants.map((p) => p.id)).size, participants.length, "ids are unique");
  assert.ok(!participants.some((p) => p.name.includes("@")), "an email-shaped tile id is never a name");

  for (const p of script) {
    const joined = p.joinAt ?? 0;
    if (fixture.admittedAt !== null && fixture.admittedAt + joined * 1000 > until) continue;
    const found = byName.get(p.name);
    assert.ok(found, `${p.name.slice(0, 20)} is listed with its exact name: ${why}`);
    assert.equal(found.label, p.label ?? null, `label of ${p.name}`);
    assert.equal(found.self, false);
    const logged = fixture.log.presence.find((e) => e.name === p.name);
    assert.ok(logged, `fixture log of ${p.name}`);
    if (logged.joinedAt === null) assert.equal(found.joined_at, null, `${p.name} was there at admission`);
    else {
      assert.ok(found.joined_at !== null, `${p.name} joined mid-meeting`);
      assert.ok(Math.abs(found.joined_at - offset(logged.joinedAt)) <= 2, `${p.name} joined at ${found.joined_at}, expected ${offset(logged.joinedAt)}`);
    }
    if (logged.leftAt !== null && logged.leftAt < until - 2000) {
      assert.ok(found.left_at !== null, `${p.name} left`);
      assert.ok(Math.abs(found.left_at - offset(logged.leftAt)) <= 2, `${p.name} left at ${found.left_at}, expected ${offset(logged.leftAt)}`);
    } else if (logged.leftAt === null) assert.equal(found.left_at, null, `${p.name} stayed`);

    // After a crash, a turn that began just before it may or may not have reached the journal.
    const margin = Number.isFinite(until) ? 1500 : 0;
    const turns = fixture.log.speech.filter((s) => s.name === p.name && s.start < until - margin);
    const mine = speech.filter((s) => s.participant_id === found.id);
    if (!Number.isFinite(until)) assert.equal(mine.length, turns.length, `${p.name}: ${turns.length} turns expected, got ${JSON.stringify(mine)}`);
    for (const turn of mine) {
      const real = fixture.log.speech.some((s) => s.name === p.name && Math.abs(offset(s.start) - turn.start) <= 0.5);
      assert.ok(real, `${p.name}: the turn at ${turn.start} matches one the fixture played (${why})`);
    }
    for (const turn of turns) {
      const start = offset(turn.start);
      const match = mine.find((s) => Math.abs(s.start - start) <= 0.5);
      assert.ok(match, `${p.name}: a turn starting at ${start.toFixed(2)} (got ${JSON.stringify(mine)})`);
      // A turn's end reaches the journal up to ~1 s late (debounce, drain): one ending just before
      // a crash ends at the observer's last sign of life instead.
      if (turn.end !== null && turn.end < until - Math.max(500, margin)) {
        const end = offset(turn.end);
        assert.ok(Math.abs(match.end - end) <= 0.5, `${p.name}: turn ${start.toFixed(2)} ends at ${match.end}, expected ${end.toFixed(2)}`);
      }
      const others = fixture.log.speech.filter((s) => s.name !== p.name && s.start < (turn.end ?? until) && (s.end ?? until) > turn.start);
      assert.equal(match.overlap, others.length > 0, `${p.name}: overlap of the turn at ${start.toFixed(2)}`);
    }
  }
  const silent = byName.get(ODD_NAME);
  assert.ok(silent);
  assert.deepEqual(speech.filter((s) => s.participant_id === silent.id), [], "nothing for the silent participant");
  assert.deepEqual(speech.filter((s) => s.participant_id === null), [], "no unattributed speech (every speaker is known)");
  assert.deepEqual(speech.filter((s) => s.participant_id === self[0]?.id), [], "the bot said nothing");
}
