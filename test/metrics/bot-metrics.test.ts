/**
 * Bot metrics with the real worker (Chromium, PulseAudio, ffmpeg) against the Teams fixture:
 * a join through the lobby moves the join, /join→lobby, lobby→admitted, active-session,
 * per-worker memory and CPU, finished and duration series, and the whole exposition parses; the
 * audio gap counters (#13) claim no gap the recording does not show.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { startTeamsFixture } from "../fixture/teams/server.ts";
import { startBotApp, waitForSession } from "../bot/fixtures/bot-app.ts";
import { holdMediaLock } from "../harness/media-lock.ts";
import type { TestApp } from "../harness/app.ts";
import { parsePrometheus, type Exposition } from "../helpers/prometheus.ts";
import { zeroRuns } from "../helpers/audio/analysis.ts";
import { channel, readWav } from "../helpers/audio/wav.ts";

// Real Chromium, PulseAudio and ffmpeg: one such file at a time (see media-lock.ts).
await holdMediaLock();

async function scrape(app: TestApp): Promise<Exposition> {
  const res = await app.request("GET", "/metrics");
  assert.equal(res.status, 200);
  return parsePrometheus(res.text);
}

describe("bot metrics (real worker, sqlite)", { timeout: 600_000 }, () => {
  test("lobby → admit → recording → stop moves every bot series once", async (t) => {
    const fixture = await startTeamsFixture();
    t.after(() => fixture.close());
    const app = await startBotApp(t, { worker: "real", bot: { MEETING_ALLOWED_HOSTS: fixture.hostPort } });
    const meeting = fixture.createMeeting({ lobby: true, tone: { frequency: 440 } });
    const before = await scrape(app);
    const join = await app.request("POST", "/join", { body: { meeting_url: meeting.joinUrl } });
    assert.equal(join.status, 200, join.text);
    const id = String(((join.body as { session: { session_id: string } }).session).session_id);
    await waitForSession(app, id, (s) => s.status === "lobby", 120_000);
    const inLobby = await scrape(app);
    assert.equal(inLobby.sum("toa_bot_join_to_lobby_seconds_count") - before.sum("toa_bot_join_to_lobby_seconds_count"), 1);
    assert.equal(inLobby.value("toa_bot_sessions_active") - before.value("toa_bot_sessions_active"), 1);
    await meeting.waitForPhase("lobby");
    meeting.admit();
    await waitForSession(app, id, (s) => s.status === "recording", 60_000);
    // Two scrapes while recording: memory at each, CPU from the second (a rate needs two samples).
    await scrape(app);
    await new Promise((r) => setTimeout(r, 1000));
    const recording = await scrape(app);
    const memory = recording.sum("toa_bot_worker_memory_bytes_count") - before.sum("toa_bot_worker_memory_bytes_count");
    assert.ok(memory >= 2, `memory samples ${memory}`);
    // A worker with its Chromium is far above 50 MB of PSS; the median is one such worker.
    assert.ok(recording.value("toa_bot_worker_memory_bytes", { quantile: "0.5" }) > 50 * 2 ** 20);
    assert.ok(recording.sum("toa_bot_worker_cpu_ratio_count") - before.sum("toa_bot_worker_cpu_ratio_count") >= 1);
    assert.ok(!recording.samples.some((s) => s.name.startsWith("toa_bot_worker_") && Object.values(s.labels).some((v) => v.includes(id))));
    await app.request("POST", `/stop/${id}`);
    const stopped = await waitForSession(app, id, (s) => s.status === "stopped", 60_000);
    const after = await scrape(app);
    const delta = (name: string, labels?: Record<string, string>): number => after.sum(name, labels) - before.sum(name, labels);
    assert.equal(delta("toa_bot_joins_total"), 1);
    assert.equal(delta("toa_bot_lobby_to_admitted_seconds_count"), 1);
    assert.equal(delta("toa_bot_join_to_admitted_seconds_count"), 1);
    assert.equal(delta("toa_bot_sessions_finished_total", { status: "stopped", end_reason: "stopped_by_api" }), 1);
    assert.equal(delta("toa_bot_session_duration_seconds_count"), 1);
    // Two files stored through the backend: the recording and its speaker timeline (#17).
    assert.equal(delta("toa_storage_uploads_total", { backend: "local", result: "stored" }), 2);
    assert.equal(after.value("toa_bot_sessions_active"), before.value("toa_bot_sessions_active"));
    // #13: the gap counters claim no more than the recording shows (digital silence between sounds):
    // a file without any keeps them at 0; a box that under-ran shows it in the file as well.
    const wav = await readWav(String(stopped.recording_file));
    const recorded = zeroRuns(channel(wav, 0), wav.sampleRate).map((r) => r.endSec - r.startSec);
    const detail = `detected ${delta("toa_bot_audio_gaps_total")} gaps, ${delta("toa_bot_audio_gap_seconds_total")} s; recorded ${JSON.stringify(recorded)}`;
    if (recorded.length === 0) assert.equal(delta("toa_bot_audio_gaps_total"), 0, detail);
    // Give or take a mixing block per gap (worker/audio/gaps.ts).
    assert.ok(delta("toa_bot_audio_gap_seconds_total") <= recorded.reduce((a, b) => a + b, 0) + 0.03 * delta("toa_bot_audio_gaps_total"), detail);
  });
});
