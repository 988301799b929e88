import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile, appendFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  journalPath,
  listJournals,
  openJournal,
  readJournal,
  summarizeJournal,
  type JournalRecord,
} from "../../shared/journal/index.ts";

const at = "2025-01-02T03:04:05.000Z";
const sample: JournalRecord[] = [
  {
    type: "session",
    session_id: "5b0a2c1e-0000-4000-8000-000000000001",
    meeting_url: "https://teams.microsoft.com/l/meetup-join/x",
    reference: "ref-ü-1",
    display_name: "Recorder \"bot\"\nline",
    record: true,
    format: "wav",
    recording_path: "/rec/a.wav",
    created_at: at,
  },
  { type: "status", status: "joining", previous_status: null, at },
  { type: "status", status: "recording", previous_status: "joining", at },
  { type: "recording_started", path: "/rec/a.wav", at },
];

async function tempDir(t: { after: (fn: () => Promise<void>) => void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "journal-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

test("records round-trip and the summary follows them", async (t) => {
  const dir = await tempDir(t);
  const path = journalPath(dir, "s1");
  const journal = await openJournal(path, { fsync: true });
  await Promise.all(sample.map((r) => journal.append(r)));
  await journal.close();
  const read = await readJournal(path);
  assert.deepEqual(read.records, sample);
  assert.equal(read.damaged, false);
  const summary = summarizeJournal(read.records);
  assert.equal(summary.finished, false);
  assert.equal(summary.lastStatus, "recording");
  assert.equal(summary.recordingPath, "/rec/a.wav");
  assert.equal(summary.recordingStarted, true);
  assert.equal(summary.recordingClosed, false);

  const more = await openJournal(path, { fsync: false });
  await more.append({ type: "recording_closed", path: "/rec/a.wav", bytes: 4, at });
  await more.append({ type: "upload_pending", location: "bucket/s1/a.wav", at });
  await more.append({ type: "stored", location: "bucket/s1/a.wav", at });
  await more.append({ type: "finished", status: "stopped", end_reason: "alone", at });
  await more.close();
  const done = summarizeJournal((await readJournal(path)).records);
  assert.equal(done.finished, true);
  assert.equal(done.lastStatus, "stopped");
  assert.equal(done.recordingClosed, true);
  assert.equal(done.storedLocation, "bucket/s1/a.wav");
  assert.equal(done.uploadPending, null);
  assert.deepEqual(await listJournals(dir), [{ sessionId: "s1", path }]);
  assert.deepEqual(await listJournals(join(dir, "absent")), []);
});

test("a journal cut at every byte offset yields its valid prefix and never throws", async (t) => {
  const dir = await tempDir(t);
  const full = journalPath(dir, "full");
  const journal = await openJournal(full, { fsync: false });
  for (const record of sample) await journal.append(record);
  await journal.close();
  const bytes = await readFile(full);
  // Record boundaries: a cut exactly at one leaves that many records and no damage.
  const ends: number[] = [];
  bytes.forEach((b, i) => {
    if (b === 0x0a) ends.push(i + 1);
  });
  assert.equal(ends.length, sample.length);
  const cut = join(dir, "cut.journal");
  for (let length = 0; length <= bytes.length; length++) {
    await writeFile(cut, bytes.subarray(0, length));
    const read = await readJournal(cut);
    const complete = ends.filter((end) => end <= length).length;
    assert.deepEqual(read.records, sample.slice(0, complete), `cut at ${length}`);
    assert.equal(read.damaged, !ends.includes(length) && length !== 0, `cut at ${length}`);
    if (read.damaged) assert.equal(read.damage?.reason, "truncated", `cut at ${length}`);
  }
});

test("a flipped byte is caught by the CRC and appending resumes after the valid prefix", async (t) => {
  const dir = await tempDir(t);
  const path = journalPath(dir, "x");
  const journal = await openJournal(path, { fsync: false });
  for (const record of sample) await journal.append(record);
  await journal.close();
  const bytes = await readFile(path);
  const secondLineEnd = bytes.indexOf(0x0a, bytes.indexOf(0x0a) + 1) + 1;
  const corrupt = Buffer.from(bytes);
  const target = secondLineEnd + 25; // inside the JSON body of the third record
  corrupt[target] = (corrupt[target] ?? 0) ^ 0x01;
  await writeFile(path, corrupt);
  const read = await readJournal(path);
  assert.equal(read.damaged, true);
  assert.equal(read.damage?.reason, "bad_crc");
  assert.equal(read.damage?.offset, secondLineEnd);
  assert.deepEqual(read.records, sample.slice(0, 2));

  // A torn tail plus garbage: reopening cuts both, new records land where readers look.
  await appendFile(path, "garbage");
  const reopened = await openJournal(path, { fsync: true });
  await reopened.append({ type: "finished", status: "interrupted", end_reason: "interrupted", at });
  await reopened.close();
  const after = await readJournal(path);
  assert.equal(after.damaged, false);
  assert.deepEqual(after.records.map((r) => r.type), ["session", "status", "finished"]);
});

test("unknown record kinds with a valid CRC are skipped, not damage", async (t) => {
  const dir = await tempDir(t);
  const path = journalPath(dir, "u");
  const journal = await openJournal(path, { fsync: false });
  await journal.append(sample[1] as JournalRecord);
  await journal.close();
  const { encodeFrame } = await import("../../shared/journal/framing.ts");
  await appendFile(path, encodeFrame(JSON.stringify({ type: "future_kind", x: 1 })));
  await appendFile(path, encodeFrame(JSON.stringify(sample[2])));
  const read = await readJournal(path);
  assert.equal(read.damaged, false);
  assert.equal(read.skipped, 1);
  assert.deepEqual(read.records, [sample[1], sample[2]]);
  await assert.rejects(openJournal(join(dir, "no", "such", "dir.journal"), { fsync: false }));
});
