// What the worker records: the fixture's tone from admission to leaving, no gaps, the duration of
// the call, in WAV and FLAC, and two workers at once never mixing their meetings.
import assert from "node:assert/strict";
import { stat } from "node:fs/promises";
import { after, before, test } from "node:test";
import { dominantFrequency, findGaps, toneSpans } from "../helpers/audio/analysis.ts";
import { channel, decodeToWav, readWav } from "../helpers/audio/wav.ts";
import { readJournal, summarizeJournal } from "../../shared/journal/index.ts";
import { trimOffsetFromJournal, trimRecording } from "../../shared/recording/index.ts";
import { startTeamsFixture, type FixtureMeeting, type TeamsFixture } from "../fixture/teams/server.ts";
import { finishedAndClean, startWorker, type WorkerRun } from "./harness.ts";
import { holdMediaLock } from "../harness/media-lock.ts";

// Real Chromium, PulseAudio and ffmpeg: one such file at a time (see media-lock.ts).
await holdMediaLock();

let fixture: TeamsFixture;
before(async () => (fixture = await startTeamsFixture()));
after(() => fixture.close());

/** The call lasts this long before the other participant leaves (then five 1 s alone checks). */
const IN_CALL_MS = 4_000;

/** Drives one meeting: (lobby → admit) → call → everyone else leaves → the worker ends alone. */
async function session(run: WorkerRun, meeting: FixtureMeeting, lobby: boolean) {
  if (lobby) {
    await run.waitFor("status", (m) => m.status === "lobby");
    await meeting.waitForPhase("lobby");
    // Time in the lobby is recorded by ffmpeg but must not end up in the file.
    await new Promise((r) => setTimeout(r, 2_000));
    meeting.admit();
  }
  const recording = await run.waitFor("status", (m) => m.status === "recording");
  await new Promise((r) => setTimeout(r, IN_CALL_MS));
  meeting.setParticipants(1);
  const result = await finishedAndClean(run);
  return { ...result, recording };
}

async function checkRecording(run: WorkerRun, meeting: FixtureMeeting, freq: number, otherFreq: number) {
  const finished = await run.waitFor("finished");
  assert.equal(finished.status, "stopped");
  assert.equal(finished.endReason, "alone");
  assert.equal(finished.recordingPath, run.init.recordingPath);
  assert.equal(finished.recordingBytes, (await stat(run.init.recordingPath)).size);
  if (run.init.format === "flac") {
    // A FLAC is cut by the supervisor after `finished`, from the journal's `admitted` record.
    const offset = trimOffsetFromJournal(summarizeJournal((await readJournal(run.init.journalPath)).records));
    assert.ok(offset !== null, "the journal places the admission");
    assert.equal((await trimRecording(run.init.recordingPath, "flac", offset)).failed, null);
  }

  const path = run.init.format === "flac" ? await decodeToWav(run.init.recordingPath) : run.init.recordingPath;
  const wav = await readWav(path);
  assert.equal(wav.sampleRate, 48_000);
  assert.equal(wav.channels, 2);
  const left = channel(wav, 0);

  const state = meeting.state();
  assert.ok(state.joinedAt && state.leftAt, JSON.stringify(state));
  const inCallSec = (Date.parse(state.leftAt) - Date.parse(state.joinedAt)) / 1000;
  const joinedMsg = run.messages.find((m) => m.type === "status" && m.status === "recording");
  const lag = joinedMsg?.type === "status" && joinedMsg.joinedAt ? Date.parse(joinedMsg.joinedAt) - Date.parse(state.joinedAt) : NaN;
  const tone = toneSpans(left, wav.sampleRate, freq);
  console.log(`# ${run.init.format} ${freq} Hz: file ${wav.durationSec.toFixed(2)} s, in call ${inCallSec.toFixed(2)} s, admission detected ${lag} ms late, tone ${tone[0]?.startSec}-${tone.at(-1)?.endSec} s`);
  assert.ok(Math.abs(wav.durationSec - inCallSec) <= 1, `file ${wav.durationSec} s vs in call ${inCallSec} s`);

  assert.ok(Math.abs(dominantFrequency(left, wav.sampleRate, { startSec: 1, maxSeconds: 2 }) - freq) <= 10);
  const first = tone[0];
  const last = tone.at(-1);
  assert.ok(first && last, "the tone is in the file");
  // The file starts before the call's audio does (the cut at the admission took none of it) and
  // not long before (the lobby wait is gone: the remote audio needs ~0.5-1.5 s to flow here).
  assert.ok(first.startSec > 0 && first.startSec <= 2, `tone starts at ${first.startSec} s`);
  assert.ok(last.endSec >= wav.durationSec - 1, `tone ends at ${last.endSec} of ${wav.durationSec} s`);
  assert.deepEqual(findGaps(left, wav.sampleRate, { minGapMs: 100 }), []);
  // The other meeting's tone never leaks in.
  assert.deepEqual(toneSpans(left, wav.sampleRate, otherFreq), []);

  const journal = await run.journal();
  const types = journal.map((r) => r.type);
  assert.ok(types.indexOf("recording_started") < types.indexOf("recording_closed"), types.join(","));
  const closed = journal.find((r) => r.type === "recording_closed");
  assert.equal(closed?.type === "recording_closed" && closed.bytes, finished.recordingBytes);
}

test("lobby → admit → recording → alone: a WAV of the call's tone, admission to leaving", { timeout: 180_000 }, async (t) => {
  const meeting = fixture.createMeeting({ lobby: true, tone: { frequency: 440 }, participants: 2 });
  const run = await startWorker(t, { meetingUrl: meeting.joinUrl });
  const { code, survivors, recording } = await session(run, meeting, true);
  assert.equal(code, 0);
  assert.deepEqual(survivors, []);
  assert.ok(recording.joinedAt);
  assert.deepEqual(run.statuses(), ["joining", "lobby", "recording", "stopped"]);
  assert.deepEqual(run.messages.flatMap((m) => (m.type === "participants" ? [m.count] : [])), [2, 1]);
  await checkRecording(run, meeting, 440, 660);
});

test("two workers at once (WAV and FLAC, different tones) never mix", { timeout: 240_000 }, async (t) => {
  const a = fixture.createMeeting({ lobby: false, tone: { frequency: 440 } });
  const b = fixture.createMeeting({ lobby: true, tone: { frequency: 660 } });
  const [runA, runB] = await Promise.all([
    startWorker(t, { meetingUrl: a.joinUrl, format: "wav" }),
    startWorker(t, { meetingUrl: b.joinUrl, format: "flac" }),
  ]);
  const [endA, endB] = await Promise.all([session(runA, a, false), session(runB, b, true)]);
  assert.deepEqual([endA.survivors, endB.survivors], [[], []]);
  assert.deepEqual(runB.statuses(), ["joining", "lobby", "recording", "stopped"]);
  await checkRecording(runA, a, 440, 660);
  await checkRecording(runB, b, 660, 440);
});
