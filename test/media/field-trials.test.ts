/** field-trials.ts: the jitter buffer's trial only for a browser without a microphone. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { fieldTrialArgs } from "../../worker/browser/field-trials.ts";

test("without a microphone the jitter buffer forgets sooner; with one WebRTC's defaults stay", () => {
  assert.deepEqual(fieldTrialArgs(false, {}), ["--force-fieldtrials=WebRTC-Audio-NetEqDelayManagerConfig/forget_factor:0.800/"]);
  assert.deepEqual(fieldTrialArgs(true, {}), []);
  assert.deepEqual(fieldTrialArgs(false, { TOAMAISUTAA_NETEQ_FORGET_PERMILLE: "983" }), ["--force-fieldtrials=WebRTC-Audio-NetEqDelayManagerConfig/forget_factor:0.983/"]);
});
