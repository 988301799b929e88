// automatic_leave over the service defaults (#16): absent fields keep the defaults.
import assert from "node:assert/strict";
import { test } from "node:test";
import { resolveLeaveRules } from "../../shared/session/automatic-leave.ts";

const defaults = { lobbyWaitMs: 30 * 60_000, maxRecordingMs: 240 * 60_000 };

test("no automatic_leave: the service defaults, five alone checks, no silence rule, no bot names", () => {
  for (const request of [undefined, null, {}]) {
    assert.deepEqual(resolveLeaveRules(request, defaults), {
      lobbyWaitMs: 30 * 60_000,
      aloneChecks: 5,
      silenceMs: null,
      silenceActivateAfterMs: 0,
      maxDurationMs: 240 * 60_000,
      botNames: [],
    });
  }
});

test("each field overrides its default; max_duration_minutes never above MAX_RECORDING_MINUTES", () => {
  const rules = resolveLeaveRules(
    { lobby_wait_minutes: 2, alone_seconds: 30, silence_minutes: 10, silence_activate_after_minutes: 5, max_duration_minutes: 60, bot_names: ["notetaker"] },
    defaults,
  );
  assert.deepEqual(rules, { lobbyWaitMs: 120_000, aloneChecks: 30, silenceMs: 600_000, silenceActivateAfterMs: 300_000, maxDurationMs: 3_600_000, botNames: ["notetaker"] });
  assert.equal(resolveLeaveRules({ max_duration_minutes: 500 }, defaults).maxDurationMs, 240 * 60_000);
});
