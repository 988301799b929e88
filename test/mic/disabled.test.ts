/**
 * MIC_PLAYBACK_ENABLED off (the default): a real bot in the call has no microphone (the page
 * hears nothing, the worker starts no virtual mic), and every audio route answers 409 {detail};
 * an unknown session is still 404.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Cleanups, startMicSession, type MicSession } from "./helpers.ts";
import { holdMediaLock } from "../harness/media-lock.ts";

// Real Chromium, PulseAudio and ffmpeg: one such file at a time (see media-lock.ts).
await holdMediaLock();

describe("audio routes with MIC_PLAYBACK_ENABLED off (real worker, sqlite)", { timeout: 300_000 }, () => {
  let s: MicSession;
  const cleanups = new Cleanups();
  after(() => cleanups.run());
  before(async () => {
    s = await startMicSession(cleanups.context, { MIC_PLAYBACK_ENABLED: false });
  });

  test("every audio route → 409", async () => {
    const form = new FormData();
    form.append("file", new Blob([new Uint8Array(1000)]), "x.wav");
    const answers = [
      await s.api("POST", `/audio/${s.id}/play`, { body: { path: "x.wav" } }),
      await s.api("POST", `/audio/${s.id}/stop?mute_after=true`),
      await s.api("POST", `/audio/${s.id}/stream`, { body: {} }),
      await s.api("DELETE", `/audio/${s.id}/stream`),
      await s.api("PUT", `/audio/${s.id}/ingest/${"a".repeat(43)}`, { body: "abc", headers: { "content-type": "application/octet-stream" } }),
    ];
    const upload = await fetch(`${s.app.url}/audio/${s.id}/play/upload`, { method: "POST", body: form });
    assert.deepEqual([...answers.map((a) => a.status), upload.status], [409, 409, 409, 409, 409, 409]);
    for (const a of answers) assert.equal(typeof (a.body as Record<string, unknown>).detail, "string");
    assert.equal((await s.api("POST", `/audio/00000000-0000-4000-8000-000000000000/play`, { body: { path: "x.wav" } })).status, 404);
  });

  test("the bot in the call has no microphone", async () => {
    await new Promise((r) => setTimeout(r, 1500));
    assert.deepEqual(s.meeting.state().micLevels, []);
  });
});
