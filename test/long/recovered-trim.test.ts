/**
 * Issue #15 "Recovered recordings trimmed like stopped ones": a recording repaired after a crash
 * is cut at the admission the journal records, as a stopped one is, so it starts within 0.5 s of
 * it. The place in the file comes from the worker's `admitted` record (a monotonic clock): a wall
 * clock stepped 60 s between `recording_started` and the in-call status changes nothing. Both
 * formats, WAV cut by a header rewrite, FLAC re-encoded under the supervisor.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { sessionPaths } from "../../control/bot/paths.ts";
import { openJournal, type RecordingFormat } from "../../shared/journal/index.ts";
import { channel, decodeToWav, readWav } from "../helpers/audio/wav.ts";
import { toneSpans } from "../helpers/audio/analysis.ts";
import { MEETING_URL, startBotApp } from "../bot/fixtures/bot-app.ts";

type Json = Record<string, unknown>;
/** Silence while the bot waited in the lobby, then the call's tone. */
const LOBBY_SEC = 3;
const CALL_SEC = 3;

async function seed(dir: string, format: RecordingFormat, journalStyle: "admitted" | "legacy" | "stepped"): Promise<string> {
  const id = randomUUID();
  const paths = sessionPaths(dir, id, format);
  mkdirSync(paths.sessionDir, { recursive: true });
  execFileSync("ffmpeg", ["-loglevel", "error", "-f", "lavfi", "-i", `anullsrc=r=48000:cl=stereo:d=${LOBBY_SEC}`, "-f", "lavfi", "-i", `sine=frequency=440:sample_rate=48000:duration=${CALL_SEC}`,
    "-filter_complex", "[1]aformat=channel_layouts=stereo[t];[0][t]concat=n=2:v=0:a=1", "-ac", "2", "-c:a", format === "flac" ? "flac" : "pcm_s16le", "-f", format, "-y", paths.recording]);
  if (format === "wav") {
    // As ffmpeg leaves a WAV when SIGKILLed: both sizes "unknown".
    const wav = readFileSync(paths.recording);
    wav.writeUInt32LE(0xffffffff, 4);
    wav.writeUInt32LE(0xffffffff, wav.indexOf("data") + 4);
    writeFileSync(paths.recording, wav);
  }
  const journal = await openJournal(paths.journal, { fsync: false });
  const t0 = Date.now() - 60_000;
  const iso = (ms: number) => new Date(t0 + ms).toISOString();
  await journal.append({ type: "session", session_id: id, meeting_url: MEETING_URL, reference: null, display_name: "Seed", record: true, format, recording_path: paths.recording, created_at: iso(0) });
  await journal.append({ type: "status", status: "joining", previous_status: null, at: iso(0) });
  await journal.append({ type: "recording_started", path: paths.recording, at: iso(0) });
  await journal.append({ type: "status", status: "lobby", previous_status: "joining", at: iso(500) });
  // "stepped": the wall clock jumped 60 s forward while the bot waited; the monotonic offset did not.
  const inCallWall = journalStyle === "stepped" ? LOBBY_SEC * 1000 + 60_000 : LOBBY_SEC * 1000;
  if (journalStyle !== "legacy") await journal.append({ type: "admitted", recording_offset_sec: LOBBY_SEC, at: iso(inCallWall) });
  await journal.append({ type: "status", status: "recording", previous_status: "lobby", at: iso(inCallWall) });
  await journal.close();
  return id;
}

for (const format of ["wav", "flac"] as const) {
  test(`a ${format} recovered after a crash starts within 0.5 s of the admission the journal records`, { timeout: 120_000 }, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), "i15-trim-"));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const ids = { admitted: await seed(dir, format, "admitted"), legacy: await seed(dir, format, "legacy"), stepped: await seed(dir, format, "stepped") };
    const app = await startBotApp(t, { recordingsDir: dir, bot: { RECORDING_FORMAT: format } });
    for (const [style, id] of Object.entries(ids)) {
      const s = (await app.request("GET", `/status/${id}`)).body as Json;
      assert.equal(s.status, "interrupted", style);
      const file = String(s.recording_file);
      const wav = await readWav(format === "flac" ? await decodeToWav(file) : file);
      const tone = toneSpans(channel(wav, 0), wav.sampleRate, 440);
      const first = tone[0];
      assert.ok(first, `${style}: the call's tone is kept`);
      assert.ok(first.startSec <= 0.55, `${style}: the tone starts at ${first.startSec} s of the file; the lobby was not cut`);
      assert.ok(first.startSec >= 0.4, `${style}: the tone starts at ${first.startSec} s; the margin before the admission was cut too`);
      assert.ok(Math.abs(wav.durationSec - (CALL_SEC + 0.5)) < 0.1, `${style}: ${wav.durationSec} s`);
    }
  });
}
