/**
 * The two trims of issue #15 on their own: a WAV cut is a header rewrite (same file, same inode,
 * idempotent: a second call after a crash cuts nothing more, a larger offset cuts only the rest);
 * a FLAC cut is re-encoded once (a tag stops a second cut) and, past its time budget, leaves the
 * file exactly as it was.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { flacTrimBudgetMs, trimFlacHead, trimWavHead } from "../../shared/recording/index.ts";
import { decodeToWav, readWav } from "../helpers/audio/wav.ts";

function tone(dir: string, ext: "wav" | "flac", seconds: number): string {
  const path = join(dir, `t.${ext}`);
  execFileSync("ffmpeg", ["-loglevel", "error", "-f", "lavfi", "-i", `sine=frequency=440:sample_rate=48000:duration=${seconds}`, "-ac", "2", "-c:a", ext === "flac" ? "flac" : "pcm_s16le", "-y", path]);
  return path;
}

test("WAV: a header rewrite, in place, idempotent", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "i15-wavtrim-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = tone(dir, "wav", 10);
  const before = statSync(path);
  const first = await trimWavHead(path, 2);
  assert.equal(first.changed, true);
  assert.equal(statSync(path).ino, before.ino, "same file: no copy");
  assert.equal(statSync(path).size, before.size);
  assert.ok(Math.abs((await readWav(path)).durationSec - 8) < 0.001);
  assert.equal((await trimWavHead(path, 2)).changed, false, "the same cut again changes nothing");
  assert.ok(Math.abs((await readWav(path)).durationSec - 8) < 0.001);
  const more = await trimWavHead(path, 3);
  assert.equal(more.changed, true);
  assert.ok(Math.abs(more.trimmedSec - 3) < 0.001 && Math.abs((await readWav(path)).durationSec - 7) < 0.001, JSON.stringify(more));
  // ffmpeg reads it too (the JUNK chunk is skipped).
  const probed = Number(execFileSync("ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path]).toString());
  assert.ok(Math.abs(probed - 7) < 0.01, String(probed));
});

test("FLAC: cut once, tagged; past its budget the file stays as it was", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "i15-flactrim-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = tone(dir, "flac", 10);
  const original = readFileSync(path);
  const late = await trimFlacHead(path, 2, { budgetMs: 1 });
  assert.ok(late.failed && /budget/.test(late.failed), JSON.stringify(late));
  assert.deepEqual(readFileSync(path), original, "untouched after a trim past its budget");
  assert.equal((await trimFlacHead(path, 2)).changed, true);
  assert.ok(Math.abs((await readWav(await decodeToWav(path))).durationSec - 8) < 0.05);
  assert.equal((await trimFlacHead(path, 2)).changed, false, "a second cut is refused by the tag");
  assert.ok(flacTrimBudgetMs(1_000_000_000) > flacTrimBudgetMs(1_000_000), "the budget grows with the file");
});
