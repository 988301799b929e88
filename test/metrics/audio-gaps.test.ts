/**
 * Audio gaps at /metrics with the real worker (Chromium, PulseAudio, ffmpeg) on the Teams
 * fixture: Chromium's audio service stopped for 800 ms in the call (longer than its 500 ms
 * PulseAudio buffer) makes its playback stream under-run; the worker's detector reports it over
 * IPC and toa_bot_audio_gaps_total and toa_bot_audio_gap_seconds_total move. The stored
 * recording is the truth: it holds the gap, and the counters claim no more lost audio than it shows.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { describe, test } from "node:test";
import { promisify } from "node:util";
import { sessionPaths } from "../../control/bot/paths.ts";
import { listProcesses } from "../../shared/process/group.ts";
import { startTeamsFixture } from "../fixture/teams/server.ts";
import { startBotApp, waitForSession } from "../bot/fixtures/bot-app.ts";
import { holdMediaLock } from "../harness/media-lock.ts";
import type { TestApp } from "../harness/app.ts";
import { zeroRuns } from "../helpers/audio/analysis.ts";
import { channel, readWav } from "../helpers/audio/wav.ts";
import { parsePrometheus, type Exposition } from "../helpers/prometheus.ts";

// Real Chromium, PulseAudio and ffmpeg: one such file at a time (see media-lock.ts).
await holdMediaLock();

const execFileAsync = promisify(execFile);
const AUDIO_SERVICE = "--utility-sub-type=audio.mojom.AudioService";
/** Chromium's buffer is 500 ms (PULSE_LATENCY_MSEC, worker/browser/launch.ts): this drains it whatever its fill. */
const STALL_MS = 800;

async function scrape(app: TestApp): Promise<Exposition> {
  const res = await app.request("GET", "/metrics");
  assert.equal(res.status, 200);
  return parsePrometheus(res.text);
}

/** The sink inputs of the worker's own daemon, as `pactl list short sink-inputs` lines. */
async function sinkInputs(workDir: string): Promise<string[]> {
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", PULSE_SERVER: `unix:${join(workDir, "run", "native")}`, HOME: join(workDir, "home"), PULSE_COOKIE: join(workDir, "home", "pulse-cookie") };
  const { stdout } = await execFileAsync("pactl", ["list", "short", "sink-inputs"], { env, timeout: 5_000 });
  return stdout.split("\n").filter(Boolean);
}

describe("audio gaps at /metrics (real worker, sqlite)", { timeout: 600_000 }, () => {
  test("Chromium's audio service stopped for 800 ms in the call: the gap counters move, as far as the recording shows", async (t) => {
    const fixture = await startTeamsFixture();
    t.after(() => fixture.close());
    const app = await startBotApp(t, { worker: "real", bot: { MEETING_ALLOWED_HOSTS: fixture.hostPort } });
    const meeting = fixture.createMeeting({ lobby: false, tone: { frequency: 440 } });
    const before = await scrape(app);
    const join = await app.request("POST", "/join", { body: { meeting_url: meeting.joinUrl } });
    assert.equal(join.status, 200, join.text);
    const id = String((join.body as { session: { session_id: string } }).session.session_id);
    await waitForSession(app, id, (s) => s.status === "recording", 120_000);

    // Chromium's playback stream is in the sink and playing the tone (its buffer had time to fill).
    const { workDir } = sessionPaths(app.recordingsDir, id, "wav");
    for (let i = 0; i < 300 && (await sinkInputs(workDir)).length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    assert.ok((await sinkInputs(workDir)).length > 0, "Chromium never opened its playback stream");
    await new Promise((r) => setTimeout(r, 1500));
    const audio = (await listProcesses()).filter((p) => p.cmdline.includes(AUDIO_SERVICE) && p.cmdline.includes(workDir)).map((p) => p.pid);
    assert.ok(audio.length > 0, "no audio service process of this session");
    try {
      for (const pid of audio) process.kill(pid, "SIGSTOP");
      await new Promise((r) => setTimeout(r, STALL_MS));
    } finally {
      for (const pid of audio) process.kill(pid, "SIGCONT");
    }
    // Audio again after the gap, so that the file shows it between sounds.
    await new Promise((r) => setTimeout(r, 1500));
    await app.request("POST", `/stop/${id}`);
    const done = await waitForSession(app, id, (s) => s.status === "stopped", 60_000);
    const after = await scrape(app);

    const gaps = after.value("toa_bot_audio_gaps_total") - before.value("toa_bot_audio_gaps_total");
    const lost = after.value("toa_bot_audio_gap_seconds_total") - before.value("toa_bot_audio_gap_seconds_total");
    const wav = await readWav(String(done.recording_file));
    const runs = zeroRuns(channel(wav, 0), wav.sampleRate);
    const recorded = runs.map((r) => r.endSec - r.startSec);
    const detail = `detected ${gaps} gaps, ${lost.toFixed(3)} s; recorded ${JSON.stringify(recorded)}`;
    // The stall is in the file: 800 ms stopped, at most 500 ms buffered.
    assert.ok(Math.max(0, ...recorded) >= 0.2, detail);
    assert.ok(gaps >= 1 && lost >= 0.2, detail);
    // Nothing the recording does not show: every detected gap is silence in the file, give or take a
    // mixing block each (worker/audio/gaps.ts). (Counts are not compared: after the stall Chromium
    // writes some zeros of its own before the tone, so two under-runs can make one stretch of silence
    // in the file: measured 2 gaps of 0.508 s in all against one of 0.526 s; and 0.596-0.597 s
    // against 0.531 s in 2 runs of 13 on 2026-11-27, so up to 33 ms a gap: 50 ms each allowed.)
    assert.ok(lost <= recorded.reduce((a, b) => a + b, 0) + 0.05 * gaps, detail);
    // No per-session series.
    assert.ok(!after.samples.some((s) => s.name.startsWith("toa_bot_audio_gap") && Object.keys(s.labels).length > 0));
  });
});
