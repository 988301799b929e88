/**
 * The observer's pure parts (no browser): names and their decorations, roster frames in the
 * forms a page may carry them, merging participants from several signals, debounced turns, and
 * the timeline built from journal records (offsets, overlap, the crash and live views).
 */
import assert from "node:assert/strict";
import { deflateRawSync, deflateSync, gzipSync } from "node:zlib";
import { test } from "node:test";
import { buildTimeline, type TimelineRecord } from "../../shared/timeline/index.ts";
import { isEmailShaped, parseRowLabel, splitDecorations } from "../../worker/observe/names.ts";
import { ParticipantRegistry, type ParticipantChange } from "../../worker/observe/participants.ts";
import { rosterFromFrame } from "../../worker/observe/roster-frames.ts";
import { TurnTracker } from "../../worker/observe/speech.ts";
import { ODD_NAME } from "./scenario.ts";

test("decorations go to the label; the name stays exactly as typed", () => {
  assert.deepEqual(splitDecorations("Ada Lovelace (Guest)"), { name: "Ada Lovelace", decorations: ["Guest"] });
  assert.deepEqual(splitDecorations("Ada Lovelace, External"), { name: "Ada Lovelace", decorations: ["External"] });
  assert.deepEqual(splitDecorations("Ada (Unverified) (Guest)"), { name: "Ada", decorations: ["Unverified", "Guest"] });
  assert.deepEqual(splitDecorations("Guest"), { name: "Guest", decorations: [] }, "a name is never emptied");
  assert.deepEqual(splitDecorations(ODD_NAME), { name: ODD_NAME, decorations: [] });
  assert.deepEqual(parseRowLabel("Lovelace, Ada, Guest, Muted", ["Lovelace, Ada"]), { name: "Lovelace, Ada", decorations: ["Guest"] });
  assert.deepEqual(parseRowLabel("Grace Hopper, Organizer, Unfamiliar", []), { name: "Grace Hopper", decorations: ["Unfamiliar"] });
  assert.ok(isEmailShaped("katherine@nasa.example"));
  assert.ok(!isEmailShaped("Katherine Johnson"));
});

const body = { participants: { "8:orgid:a": { details: { id: "8:orgid:a", displayName: "Ada" }, state: "active", endpoints: { e: { call: { mediaStreams: [{ type: "audio", sourceId: 1053 }, { type: "video", sourceId: 9 }] } } } } } };

test("roster frames: zlib, raw deflate, gzip or plain JSON bodies; other frames give nothing", () => {
  const json = JSON.stringify(body);
  const url = "https://x.example/conv/rosterUpdate/";
  for (const encoded of [deflateSync(json).toString("base64"), deflateRawSync(json).toString("base64"), gzipSync(json).toString("base64"), json]) {
    const entries = rosterFromFrame(`3:::${JSON.stringify({ url, headers: {}, body: encoded })}`);
    assert.deepEqual(entries, [{ mri: "8:orgid:a", displayName: "Ada", active: true, sources: [1053] }]);
  }
  assert.deepEqual(rosterFromFrame(`3:::${JSON.stringify({ url: "https://x.example/conversationEnd/", body: json })}`), []);
  assert.deepEqual(rosterFromFrame("3:::not json rosterUpdate"), []);
});

test("participants: one id across signals, self by MRI, joined late or there at admission, left when every signal agrees", () => {
  const changes: [string, ParticipantChange, number][] = [];
  const admittedAt = 1_000_000;
  const r = new ParticipantRegistry({ selfName: "Bot", admittedAt, onChange: (p, c, at) => changes.push([p.name, c, at]) });
  r.call({ callerMri: "8:teamsvisitor:bot", participants: [{ id: "8:orgid:a", displayName: "Ada", sources: [] }] }, admittedAt + 500);
  r.roster([{ mri: "8:teamsvisitor:bot", displayName: "Bot", active: true, sources: [7] }], admittedAt + 600);
  r.tiles([{ name: "Ada (Guest)", tid: "ada@example.com", aria: null }, { name: null, tid: "someone@example.com", aria: null }], admittedAt + 700);
  r.roster([{ mri: "8:orgid:k", displayName: "Katherine", active: true, sources: [2331] }], admittedAt + 8_000);
  const [bot, ada, kat] = ["Bot", "Ada", "Katherine"].map((n) => r.list().find((p) => p.name === n));
  assert.equal(r.list().length, 3, "an email-only tile is nobody");
  assert.equal(bot?.self, true);
  assert.equal(ada?.label, "Guest");
  assert.equal(ada?.joinedAt, null);
  assert.equal(kat?.joinedAt, admittedAt + 8_000);
  assert.equal(r.bySource(2331)?.id, kat?.id);
  // Ada leaves the call object, but her tile is still there: not gone yet.
  r.call({ callerMri: "8:teamsvisitor:bot", participants: [] }, admittedAt + 9_000);
  assert.equal(ada?.present, true);
  r.tiles([], admittedAt + 9_500);
  assert.equal(ada?.present, false);
  assert.equal(ada?.leftAt, admittedAt + 9_500);
  assert.deepEqual(changes.filter(([, c]) => c !== "updated").map(([n, c]) => `${n}:${c}`), ["Ada:joined", "Bot:joined", "Katherine:joined", "Ada:left"]);
});

test("turns: a gap under 300 ms does not split, a longer one does; edges from the play-out time", () => {
  const events: string[] = [];
  const tracker = new TurnTracker({ start: (k, _p, at) => events.push(`start ${k} ${at}`), end: (k, at) => events.push(`end ${k} ${at}`) });
  const heard = (at: number) => new Map([["p1", { participantId: "p1", at }]]);
  const none = new Map();
  tracker.update(1000, heard(990));
  tracker.update(1100, heard(1090));
  tracker.update(1200, none);
  tracker.update(1300, none); // 200 ms gap
  tracker.update(1400, heard(1395));
  tracker.update(1500, none);
  tracker.update(1600, none);
  tracker.update(1700, none); // 300 ms: the turn ends where it was last heard
  assert.deepEqual(events, ["start p1 940", "end p1 1415"]);
});

test("turns: settled up to the earliest edge still to come (a start one sample back, an open turn's end)", () => {
  const edges: string[] = [];
  const tracker = new TurnTracker({ start: (k, _p, at) => edges.push(`start ${k} ${at}`), end: (k, at) => edges.push(`end ${k} ${at}`) });
  const heard = (at: number) => new Map([["p1", { participantId: "p1", at }]]);
  // Nobody speaks: a turn first seen in the next sample (after 1000) starts after 1000 - 150.
  assert.equal(tracker.settledThrough(1000), 850);
  tracker.update(1100, heard(1090));
  tracker.update(1200, heard(1195));
  // Open: it ends no earlier than where it was last heard (plus a frame).
  assert.equal(tracker.settledThrough(1200), 1050);
  tracker.update(1300, new Map());
  tracker.update(1400, new Map());
  assert.equal(tracker.settledThrough(1400), 1215);
  tracker.update(1500, new Map());
  assert.deepEqual(edges, ["start p1 1040", "end p1 1215"]);
  // Every edge found so far lies before what is settled now; none can come before it.
  assert.equal(tracker.settledThrough(1500), 1350);
});

test("timeline: offsets from the final origin, overlap on both, null speakers kept, crash and live views", () => {
  const o = 1_700_000_000_000;
  const records: TimelineRecord[] = [
    { type: "clock", opened_at: o - 3000, admitted_at: o + 500, origin: o, final: false },
    { type: "participant", id: "p1", name: "Ada", label: "Guest", self: false, joined_at: null, left_at: null },
    { type: "participant", id: "p2", name: "Grace", label: null, self: false, joined_at: o + 4000, left_at: o + 9000 },
    { type: "speech_start", key: "p1", participant_id: "p1", at: o + 1000 },
    { type: "speech_start", key: "p2", participant_id: "p2", at: o + 2000 },
    { type: "speech_end", key: "p1", at: o + 3000 },
    { type: "speech_end", key: "p2", at: o + 4000 },
    { type: "speech_start", key: "source:77", participant_id: null, at: o + 5000 },
    { type: "speech_end", key: "source:77", at: o + 5555 },
    { type: "speech_start", key: "p1", participant_id: "p1", at: o + 6000 },
    { type: "alive", at: o + 7000 },
  ];
  const base = { sessionId: "s", reference: null, recordingFile: null, records };
  const live = buildTimeline({ ...base, mode: "live", now: o + 8000 });
  assert.equal(live.started_at, new Date(o).toISOString());
  assert.equal(live.ended_at, null);
  assert.deepEqual(live.speech, [
    { participant_id: "p1", start: 1, end: 3, overlap: true },
    { participant_id: "p2", start: 2, end: 4, overlap: true },
    { participant_id: null, start: 5, end: 5.56, overlap: false },
    { participant_id: "p1", start: 6, end: 8, overlap: false },
  ]);
  assert.deepEqual(live.participants[1], { id: "p2", name: "Grace", label: null, self: false, joined_at: 4, left_at: 9 });
  // A crash: the file was never trimmed (offset 0 is ffmpeg's start) and the open turn ends at the last sign of life.
  const crashed = buildTimeline({ ...base, mode: "final", now: o + 60_000 });
  assert.equal(crashed.started_at, new Date(o - 3000).toISOString());
  assert.deepEqual(crashed.speech.at(-1), { participant_id: "p1", start: 9, end: 10, overlap: false });
  assert.equal(crashed.ended_at, new Date(o + 7000).toISOString());
  // The worker trimmed the file but died before its final clock: the planned origin holds.
  assert.equal(buildTimeline({ ...base, mode: "final", now: o + 60_000, trimmed: true }).started_at, new Date(o).toISOString());
  const clean = buildTimeline({ ...base, records: [...records, { type: "speech_end", key: "p1", at: o + 6500 }, { type: "clock", opened_at: o - 3000, admitted_at: o + 500, origin: o + 20, final: true }], mode: "final", now: o + 60_000 });
  assert.deepEqual(clean.speech[0], { participant_id: "p1", start: 0.98, end: 2.98, overlap: true });
});

test("participants: two people of one name are two rows and two tiles, each for one of them", () => {
  const admittedAt = 1_700_000_000_000;
  const changes: [string, string, string | null][] = [];
  const r = new ParticipantRegistry({ selfName: "Bot", admittedAt, onChange: (p, c) => changes.push([p.id, c, p.label]) });
  const first = { mri: "8:orgid:alex1", displayName: "Alex Smith", active: true, sources: [11] };
  r.roster([first], admittedAt + 100);
  r.people(["Alex Smith"], admittedAt + 200);
  r.tiles([{ name: "Alex Smith", tid: "Alex Smith", aria: "Alex Smith" }], admittedAt + 200);
  // The second Alex joins, shown as External.
  const second = { mri: "8:orgid:alex2", displayName: "Alex Smith", active: true, sources: [22] };
  r.roster([second], admittedAt + 7_000);
  for (const order of [0, 1]) {
    const rows = ["Alex Smith", "Alex Smith, External"];
    r.people(order ? rows.reverse() : rows, admittedAt + 7_500 + order);
    const tiles = [{ name: "Alex Smith", tid: "Alex Smith", aria: "Alex Smith" }, { name: "Alex Smith", tid: "alex@ext.example", aria: "Alex Smith, External" }];
    r.tiles(order ? tiles.reverse() : tiles, admittedAt + 7_500 + order);
  }
  const alex1 = r.list().find((p) => p.mri === first.mri)!;
  const alex2 = r.list().find((p) => p.mri === second.mri)!;
  assert.notEqual(alex1.id, alex2.id);
  assert.equal(alex1.label, null, "the first Alex shows no decoration");
  assert.equal(alex2.label, "External");
  assert.equal(alex2.joinedAt, admittedAt + 7_000);
  // The first Alex leaves: the roster says so and one row and one tile of that name remain.
  r.roster([{ ...first, active: false }], admittedAt + 16_000);
  r.people(["Alex Smith, External"], admittedAt + 16_200);
  r.tiles([{ name: "Alex Smith", tid: "alex@ext.example", aria: "Alex Smith, External" }], admittedAt + 16_200);
  assert.equal(alex1.present, false, `the first Alex left: ${JSON.stringify(changes)}`);
  assert.equal(alex1.leftAt, admittedAt + 16_200);
  assert.equal(alex2.present, true);
  assert.equal(alex2.label, "External");
  assert.deepEqual(changes.filter(([id, c]) => id === alex1.id && c === "left").length, 1);
});
