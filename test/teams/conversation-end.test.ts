// The signalling WebSocket's frames (teams-dom.md "2026 facts") as the adapter reads them.
import assert from "node:assert/strict";
import { test } from "node:test";
import { readConversationEnd } from "../../worker/teams/conversation-end.ts";
import { parseSignallingFrame } from "../../worker/teams/ws-frames.ts";

const END_URL = "https://api.flightproxy.teams.microsoft.com/api/v2/ep/conversation/abc/conversationEnd/";

function end(payload: string) {
  const frame = parseSignallingFrame(payload);
  assert.ok(frame, payload);
  return readConversationEnd(frame);
}

test("subCodes map to denied, anonymous join disabled, removed; anything else is the end", () => {
  const cases: Array<[unknown, string, number | null]> = [
    [{ callEndReason: { subCode: 5854 } }, "denied", 5854],
    [{ subCode: "5723" }, "anonymous_join_disabled", 5723],
    [{ reason: { details: { subCode: 5000 } }, sender: { displayName: "Org" } }, "removed", 5000],
    [{ callEndReason: { subCode: 5300 } }, "removed", 5300],
    [{ callEndReason: { code: 0, subCode: 0 } }, "ended", 0],
    [{}, "ended", null],
  ];
  for (const [body, kind, subCode] of cases) {
    // The body as a JSON string (as Teams sends it) and as an object: both are read.
    for (const b of [JSON.stringify(body), body]) {
      const got = end(`3:::${JSON.stringify({ url: END_URL, headers: {}, body: b })}`);
      assert.equal(got?.kind, kind, JSON.stringify(body));
      assert.equal(got?.subCode, subCode);
    }
  }
  assert.equal(end(`3:::${JSON.stringify({ url: END_URL, body: { subCode: 5000, sender: { displayName: "Org" } } })}`)?.sender, "Org");
});

test("frames that are not a conversationEnd, or not frames at all, say nothing", () => {
  assert.equal(parseSignallingFrame("1::"), null);
  assert.equal(parseSignallingFrame("2::"), null);
  assert.equal(parseSignallingFrame("3:::not json"), null);
  assert.equal(parseSignallingFrame(Buffer.from("3:::{}")), null);
  const roster = parseSignallingFrame(`3:::${JSON.stringify({ url: "https://x/conversation/abc/rosterUpdate/", body: "eJw=" })}`);
  assert.ok(roster);
  assert.equal(readConversationEnd(roster), null);
});
