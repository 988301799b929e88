// The meeting ends while the bot waits in the lobby: never admitted, and nobody can admit it now,
// so the session ends not_admitted with the cause meeting_ended (README Decisions), not error
// (recorder-bot.md: error is a browser, audio or storage failure). Real worker, Teams fixture.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { startTeamsFixture, type TeamsFixture } from "../fixture/teams/server.ts";
import { finishedAndClean, startWorker } from "./harness.ts";
import { holdMediaLock } from "../harness/media-lock.ts";

// Real Chromium, PulseAudio and ffmpeg: one such file at a time (see media-lock.ts).
await holdMediaLock();

let fixture: TeamsFixture;
before(async () => (fixture = await startTeamsFixture()));
after(() => fixture.close());

test("meeting ended in the lobby → not_admitted/meeting_ended, no recording", { timeout: 150_000 }, async (t) => {
  const meeting = fixture.createMeeting({ lobby: true });
  const run = await startWorker(t, { meetingUrl: meeting.joinUrl });
  await run.waitFor("status", (m) => m.status === "lobby");
  await meeting.waitForPhase("lobby");
  meeting.end();
  const { finished, survivors } = await finishedAndClean(run);
  assert.equal(finished.status, "not_admitted");
  assert.equal(finished.endReason, "meeting_ended");
  assert.equal(finished.errorMessage, null);
  assert.equal(finished.recordingPath, null);
  assert.deepEqual(survivors, []);
  assert.deepEqual(run.statuses(), ["joining", "lobby", "not_admitted"]);
});
