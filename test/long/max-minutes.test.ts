/**
 * Issue #15 "Nothing grows without bound": MAX_RECORDING_MINUTES above what a WAV can hold
 * (4 GiB ≈ 372.8 minutes at 48 kHz stereo 16-bit, the lobby wait included) stops the start with
 * exit 78 and one line naming the key; FLAC has no such limit; the defaults load.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { loadConfig } from "../../control/config/index.ts";
import { runMain } from "../harness/main-process.ts";

test("MAX_RECORDING_MINUTES past a WAV's 4 GiB: exit 78 naming the key", async () => {
  const { code, stderr } = await runMain({ LocalLogin__Enabled: "false", MAX_RECORDING_MINUTES: "400" });
  assert.equal(code, 78, stderr);
  const lines = stderr.trim().split("\n");
  assert.equal(lines.length, 1, stderr);
  assert.match(lines[0] ?? "", /MAX_RECORDING_MINUTES.*4 GiB/);
});

test("the lobby wait counts, FLAC is not limited, the defaults load", () => {
  const base = { LocalLogin__Enabled: "false" };
  assert.throws(() => loadConfig({ ...base, MAX_RECORDING_MINUTES: "360" }), /MAX_RECORDING_MINUTES/);
  assert.equal(loadConfig({ ...base, MAX_RECORDING_MINUTES: "360", MEETING_WAIT_FOR_LOBBY: "10" }).bot.MAX_RECORDING_MINUTES, 360);
  assert.equal(loadConfig({ ...base, MAX_RECORDING_MINUTES: "600", RECORDING_FORMAT: "flac" }).bot.MAX_RECORDING_MINUTES, 600);
  assert.equal(loadConfig(base).bot.MAX_RECORDING_MINUTES, 240);
});
