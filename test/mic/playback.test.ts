/**
 * Speaking into the meeting through the real API, a real worker (Chromium, PulseAudio, ffmpeg)
 * and the Teams fixture, whose page reports what it hears from the bot's microphone: a file from
 * MEDIA_DIR, an upload, staged audio (unmute false), mute_after, and the recording never holding
 * the bot's own voice. One bot for the whole file (2 shared cores).
 */
import assert from "node:assert/strict";
import { readFile, readdir, stat, writeFile } from "node:fs/promises";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { after, before, describe, test } from "node:test";
import { channel, readWav } from "../helpers/audio/wav.ts";
import { goertzelPower } from "../helpers/audio/analysis.ts";
import { survivorsMentioning } from "../helpers/audio/leftovers.ts";
import { waitForSession } from "../bot/fixtures/bot-app.ts";
import { sessionPaths } from "../../control/bot/paths.ts";
import { Cleanups, PLAY_HZ, heardAt, levelsSince, sleep, startMicSession, switchedTone, waitHeard, type MicSession } from "./helpers.ts";
import { holdMediaLock } from "../harness/media-lock.ts";

const execFileAsync = promisify(execFile);

// Real Chromium, PulseAudio and ffmpeg: one such file at a time (see media-lock.ts).
await holdMediaLock();

type Json = Record<string, unknown>;

describe("microphone playback (real worker, sqlite)", { timeout: 600_000, concurrency: false }, () => {
  let s: MicSession;
  const cleanups = new Cleanups();
  after(() => cleanups.run());
  before(async () => {
    s = await startMicSession(cleanups.context, { MAX_UPLOAD_MB: 1 });
    await switchedTone(join(s.mediaDir, "tone.wav"), 4);
    await switchedTone(join(s.mediaDir, "long.wav"), 20);
    await switchedTone(join(s.mediaDir, "other.wav"), 4, 600);
    await writeFile(join(s.mediaDir, "notes.txt"), "not audio\n");
  });

  test("a file from MEDIA_DIR: the bot unmutes and the meeting hears it", async () => {
    const since = Date.now();
    const res = await s.api("POST", `/audio/${s.id}/play`, { body: { path: "tone.wav" } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { session_id: s.id, status: "playing", path: "tone.wav", loop: false, volume: 1, unmuted: true });
    const heard = await waitHeard(s.meeting, since);
    assert.ok(heard.length >= 3);
    assert.equal(s.meeting.state().muted, false);
    // The worker switches suppression off through the More menu once in the call, in parallel
    // with the first requests: wait for it rather than racing it.
    const deadline = Date.now() + 15_000;
    while (s.meeting.state().noiseSuppression !== "off" && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    assert.equal(s.meeting.state().noiseSuppression, "off");
  });

  test("unmute false stages the audio: it plays into the sink while the meeting hears nothing", async () => {
    const res = await s.api("POST", `/audio/${s.id}/play`, { body: { path: "tone.wav", unmute: false } });
    assert.equal(res.status, 200, res.text);
    assert.equal((res.body as Json).unmuted, false);
    const since = Date.now();
    await sleep(3000);
    assert.equal(s.meeting.state().muted, true);
    const levels = levelsSince(s.meeting, since);
    assert.ok(levels.length >= 20, `levels ${levels.length}`);
    assert.deepEqual(heardAt(levels), []);
    // Unmuting mid-play (a new play) is heard at once: the staging was real playback.
    const again = Date.now();
    assert.equal((await s.api("POST", `/audio/${s.id}/play`, { body: { path: "tone.wav" } })).status, 200);
    await waitHeard(s.meeting, again);
  });

  test("stop: silence after it; mute_after=true mutes, false leaves the mic open", async () => {
    assert.equal((await s.api("POST", `/audio/${s.id}/play`, { body: { path: "long.wav", loop: true, volume: 0.8 } })).status, 200);
    await waitHeard(s.meeting, Date.now());
    const stop = await s.api("POST", `/audio/${s.id}/stop?mute_after=false`);
    assert.equal(stop.status, 200, stop.text);
    assert.deepEqual(stop.body, { session_id: s.id, status: "stopped", muted: false });
    await sleep(500); // what pulse and the page still held
    const after = Date.now();
    await sleep(2000);
    assert.equal(s.meeting.state().muted, false);
    assert.deepEqual(heardAt(levelsSince(s.meeting, after)), []);

    assert.equal((await s.api("POST", `/audio/${s.id}/play`, { body: { path: "long.wav" } })).status, 200);
    await waitHeard(s.meeting, Date.now());
    const muted = await s.api("POST", `/audio/${s.id}/stop?mute_after=true`);
    assert.deepEqual(muted.body, { session_id: s.id, status: "stopped", muted: true });
    assert.equal(s.meeting.state().muted, true);
  });

  test("a new play replaces the current one; loop keeps playing past the file's end", async () => {
    assert.equal((await s.api("POST", `/audio/${s.id}/play`, { body: { path: "tone.wav", loop: true } })).status, 200);
    await sleep(5000); // past the 4 s file
    const since = Date.now();
    await waitHeard(s.meeting, since, { count: 5 });
    assert.equal((await s.api("POST", `/audio/${s.id}/play`, { body: { path: "other.wav" } })).status, 200);
    const switched = Date.now() + 500;
    await waitHeard(s.meeting, switched, { hz: 600, count: 3 });
    await sleep(1500);
    assert.deepEqual(heardAt(levelsSince(s.meeting, switched)), [], "the looped tone stopped when replaced");
    await s.api("POST", `/audio/${s.id}/stop`);
  });

  test("an upload plays and is deleted once it finished; past MAX_UPLOAD_MB 413", async () => {
    const uploads = join(sessionPaths(s.app.recordingsDir, s.id, "wav").workDir, "uploads");
    const form = new FormData();
    form.append("file", new Blob([await readFile(join(s.mediaDir, "tone.wav"))], { type: "audio/wav" }), "tone.wav");
    form.append("unmute", "true");
    const since = Date.now();
    const res = await fetch(`${s.app.url}/audio/${s.id}/play/upload`, { method: "POST", body: form });
    const body = (await res.json()) as Json;
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.status, "playing");
    assert.equal(body.filename, "tone.wav");
    assert.equal((await readdir(uploads)).length, 1, "stored while it plays");
    await waitHeard(s.meeting, since);
    await sleep(4500);
    assert.deepEqual(await readdir(uploads), [], "deleted after playing");

    const big = new FormData();
    big.append("file", new Blob([await readFile(join(s.mediaDir, "long.wav"))]), "long.wav");
    const tooBig = await fetch(`${s.app.url}/audio/${s.id}/play/upload`, { method: "POST", body: big });
    assert.equal(tooBig.status, 413);
    assert.equal(typeof ((await tooBig.json()) as Json).detail, "string");
    assert.deepEqual(await readdir(uploads), []);

    const none = await fetch(`${s.app.url}/audio/${s.id}/play/upload`, { method: "POST", body: new FormData() });
    assert.equal(none.status, 422);
  });

  test("bad requests: volume out of 0-2 → 422, missing file → 404, not audio → 400, unknown session → 404", async () => {
    assert.equal((await s.api("POST", `/audio/${s.id}/play`, { body: { path: "tone.wav", volume: 2.5 } })).status, 422);
    assert.equal((await s.api("POST", `/audio/${s.id}/play`, { body: { path: "tone.wav", volume: -0.1 } })).status, 422);
    const missing = await s.api("POST", `/audio/${s.id}/play`, { body: { path: "nope.wav" } });
    assert.equal(missing.status, 404);
    assert.equal(typeof (missing.body as Json).detail, "string");
    assert.equal((await s.api("POST", `/audio/${s.id}/play`, { body: { path: "notes.txt" } })).status, 400);
    // A picture and a silent video open fine in ffmpeg, but hold nothing to play: 400, never "playing".
    await execFileAsync("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "color=c=red:s=32x32:d=1", "-frames:v", "1", join(s.mediaDir, "picture.png")]);
    await execFileAsync("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "color=c=blue:s=32x32:d=1", "-c:v", "mpeg4", join(s.mediaDir, "silent.mp4")]);
    for (const path of ["picture.png", "silent.mp4"]) {
      const res = await s.api("POST", `/audio/${s.id}/play`, { body: { path } });
      assert.equal(res.status, 400, `${path}: ${res.text}`);
    }
    assert.equal((await s.api("POST", `/audio/00000000-0000-4000-8000-000000000000/play`, { body: { path: "tone.wav" } })).status, 404);
    assert.equal((await s.api("POST", `/audio/00000000-0000-4000-8000-000000000000/stop`)).status, 404);
  });

  test("the recording never holds the bot's own playback", async () => {
    assert.equal((await s.api("POST", `/audio/${s.id}/play`, { body: { path: "long.wav" } })).status, 200);
    await waitHeard(s.meeting, Date.now());
    await sleep(3000);
    await s.api("POST", `/stop/${s.id}`);
    const done = await waitForSession(s.app, s.id, (x) => x.status === "stopped", 60_000);
    const wav = await readWav(String(done.recording_file));
    const left = channel(wav, 0);
    const tone = goertzelPower(left, wav.sampleRate, 440);
    const own = goertzelPower(left, wav.sampleRate, PLAY_HZ);
    assert.ok(tone > 1e-4, `the meeting's 440 Hz is recorded (${tone})`);
    assert.ok(own < tone / 1000, `no ${PLAY_HZ} Hz in the recording: ${own} vs 440 Hz ${tone}`);
    assert.ok((await stat(String(done.recording_file))).size > 0);
    assert.deepEqual(await survivorsMentioning(sessionPaths(s.app.recordingsDir, s.id, "wav").sessionDir), []);
    const gone = await s.api("POST", `/audio/${s.id}/play`, { body: { path: "tone.wav" } });
    assert.equal(gone.status, 409, "not in the call any more");
  });
});
