/**
 * Whole-service crashes with the real worker (SQLite): a control plane SIGKILLed mid-recording
 * (WAV and FLAC) is replaced by a new one on the same RECORDINGS_DIR and database, which reports
 * the session `interrupted` with its repaired recording and webhook, and no process of the old
 * run survives; SIGTERM mid-recording ends the session `stopped` with a complete file.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { describe, test } from "node:test";
import { sessionPaths } from "../../control/bot/paths.ts";
import { readFlacStreamInfo } from "../../shared/recording/index.ts";
import { survivorsMentioning } from "../helpers/audio/leftovers.ts";
import { startTeamsFixture } from "../fixture/teams/server.ts";
import { startControlPlane, waitStatus, type ControlPlane } from "./fixtures/control-plane.ts";
import { hear } from "./fixtures/media.ts";
import { startReceiver } from "./fixtures/receiver.ts";
import { holdMediaLock } from "../harness/media-lock.ts";

// Real Chromium, PulseAudio and ffmpeg: one such file at a time (see media-lock.ts).
await holdMediaLock();

describe("control plane crash and shutdown (real worker, sqlite)", { timeout: 900_000, concurrency: false }, () => {
  for (const format of ["wav", "flac"] as const) {
    test(`SIGKILL of the control plane mid-recording (${format}): the next start recovers`, async (t) => {
      const dir = mkdtempSync(join(tmpdir(), "bot-crash-"));
      const fixture = await startTeamsFixture();
      t.after(() => fixture.close());
      const receiver = await startReceiver();
      t.after(() => receiver.close());
      const env = {
        DATABASE_URL: `file:${join(dir, "app.db")}`,
        RECORDINGS_DIR: join(dir, "rec"),
        RECORDING_FORMAT: format,
        MEETING_ALLOWED_HOSTS: fixture.hostPort,
        WEBHOOK_URL: receiver.url,
      };
      const planes: ControlPlane[] = [];
      t.after(async () => {
        for (const p of planes) if (p.proc.exitCode === null) p.proc.kill("SIGKILL");
      });
      t.after(() => rmSync(dir, { recursive: true, force: true }));
      const first = await startControlPlane(env);
      planes.push(first);
      const meeting = fixture.createMeeting({ lobby: false, tone: { frequency: 440 } });
      const join1 = await first.request("POST", "/join", { meeting_url: meeting.joinUrl, reference: `crash-${format}` });
      const id = String((join1.body.session as Record<string, unknown>).session_id);
      await waitStatus(first, id, (s) => s.status === "recording");
      await new Promise((r) => setTimeout(r, 4000));
      first.proc.kill("SIGKILL");
      await first.exited;

      const second = await startControlPlane(env);
      planes.push(second);
      const s = await waitStatus(second, id, (x) => x.status === "interrupted", 60_000);
      assert.equal(s.end_reason, "interrupted");
      const file = String(s.recording_file);
      assert.match(basename(file), new RegExp(`^${id}_\\d{8}_\\d{6}\\.${format}$`));
      if (format === "flac") assert.ok((await readFlacStreamInfo(file)).totalSamples > 0, "STREAMINFO repaired");
      const heard = await hear(file);
      assert.ok(heard.durationSec > 3, `duration ${heard.durationSec}`);
      assert.ok(Math.abs(heard.frequency - 440) <= 10, `frequency ${heard.frequency}`);
      const hook = await receiver.waitFor((e) => e.event === "finished" && e.session_id === id, 60_000);
      assert.equal(hook.status, "interrupted");
      assert.equal(hook.reference, `crash-${format}`);
      assert.deepEqual(await survivorsMentioning(sessionPaths(env.RECORDINGS_DIR, id, format).sessionDir), [], "no process of the old run survives");
      second.proc.kill("SIGTERM");
      assert.equal(await second.exited, 0);
    });
  }

  test("SIGTERM mid-recording: the session ends stopped with a complete file", async (t) => {
    const dir = mkdtempSync(join(tmpdir(), "bot-term-"));
    const fixture = await startTeamsFixture();
    t.after(() => fixture.close());
    const env = { DATABASE_URL: `file:${join(dir, "app.db")}`, RECORDINGS_DIR: join(dir, "rec"), MEETING_ALLOWED_HOSTS: fixture.hostPort, SHUTDOWN_GRACE_SECONDS: "30" };
    const cp = await startControlPlane(env);
    t.after(() => void (cp.proc.exitCode === null && cp.proc.kill("SIGKILL")));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const meeting = fixture.createMeeting({ lobby: false, tone: { frequency: 440 } });
    const joined = await cp.request("POST", "/join", { meeting_url: meeting.joinUrl });
    const id = String((joined.body.session as Record<string, unknown>).session_id);
    await waitStatus(cp, id, (s) => s.status === "recording");
    await new Promise((r) => setTimeout(r, 3000));
    cp.proc.kill("SIGTERM");
    assert.equal(await cp.exited, 0);
    const next = await startControlPlane(env);
    t.after(() => void (next.proc.exitCode === null && next.proc.kill("SIGKILL")));
    const s = (await next.request("GET", `/status/${id}`)).body;
    assert.equal(s.status, "stopped", JSON.stringify(s));
    const heard = await hear(String(s.recording_file));
    assert.ok(heard.durationSec > 2 && Math.abs(heard.frequency - 440) <= 10, JSON.stringify(heard));
    next.proc.kill("SIGTERM");
    await next.exited;
  });
});
