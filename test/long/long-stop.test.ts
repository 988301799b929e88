/**
 * Issue #15 "A 4-hour stop ends `interrupted`": the stop path's time no longer grows with the
 * recording. A session holding a 4-hour WAV (synthetic, sparse: the worker's real closing code,
 * settleRecording, runs on it) is stopped through the API with a supervisor that kills a worker
 * not gone within 15 s; it ends `stopped`, and the stored file is cut at the admission by a
 * header rewrite (its audio 4 h less the lobby, the same file length: no copy was made). Before
 * the fix the worker re-encoded the whole file first (38 s measured here at load 9).
 */
import assert from "node:assert/strict";
import { open, stat } from "node:fs/promises";
import { test } from "node:test";
import { MEETING_URL, startBotApp, waitForSession } from "../bot/fixtures/bot-app.ts";

type Json = Record<string, unknown>;

/** The chunk list of a WAV, read from its headers only (the file is gigabytes). */
async function chunks(path: string): Promise<{ id: string; offset: number; size: number }[]> {
  const file = await open(path, "r");
  try {
    const out: { id: string; offset: number; size: number }[] = [];
    const { size: length } = await file.stat();
    let offset = 12;
    const head = Buffer.alloc(8);
    while (offset + 8 <= length && out.length < 16) {
      await file.read(head, 0, 8, offset);
      const size = head.readUInt32LE(4);
      out.push({ id: head.toString("ascii", 0, 4), offset, size });
      offset += 8 + size + (size & 1);
    }
    return out;
  } finally {
    await file.close();
  }
}

test("a 4-hour WAV session stopped by the API ends stopped, cut at the admission without a copy", { timeout: 180_000 }, async (t) => {
  const app = await startBotApp(t, { feature: { stopTimeoutMs: 15_000 } });
  const join = await app.request("POST", "/join", { body: { meeting_url: MEETING_URL, display_name: "fake:long" } });
  const id = String(((join.body as Json).session as Json).session_id);
  await waitForSession(app, id, (s) => s.status === "recording");
  assert.equal((await app.request("POST", `/stop/${id}`)).status, 200);
  const s = await waitForSession(app, id, (x) => x.status !== "recording", 120_000);
  assert.equal(s.status, "stopped", JSON.stringify(s));
  assert.equal(s.end_reason, "stopped_by_api");
  const file = String(s.recording_file);
  const fourHours = 4 * 3600 * 192_000;
  assert.equal((await stat(file)).size, 44 + fourHours, "the file was not copied or shortened, only its header rewritten");
  const list = await chunks(file);
  const data = list.find((c) => c.id === "data");
  assert.deepEqual(list.map((c) => c.id), ["fmt ", "JUNK", "data"]);
  // Admitted 10 s in, less the 0.5 s margin: 9.5 s of lobby gone, the rest kept.
  assert.equal(data?.size, fourHours - 9.5 * 192_000);
  assert.equal(s.recording_bytes, 44 + fourHours);
});
