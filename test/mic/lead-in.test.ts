/**
 * The lead-in of a raw live stream (worker/playback/lead-in.ts): leading silence that arrives
 * while ffmpeg starts is dropped down to LEAD_KEEP_MS, and nothing else is ever dropped.
 */
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { describe, test } from "node:test";
import { LEAD_KEEP_MS, isSilent, pipeWithLeadIn } from "../../worker/playback/lead-in.ts";

const silence = (ms: number): Buffer => Buffer.alloc(96 * ms);
function tone(ms: number): Buffer {
  const buf = Buffer.alloc(96 * ms);
  for (let i = 0; i < buf.length / 2; i++) buf.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 1000 * i) / 48000)), i * 2);
  return buf;
}

async function run(chunks: Buffer[], openAfter: number | null): Promise<{ out: Buffer; dropped: number }> {
  const source = new PassThrough();
  const sink = new PassThrough();
  const parts: Buffer[] = [];
  sink.on("data", (d: Buffer) => parts.push(d));
  const sinkEnded = new Promise<void>((resolve) => sink.once("end", resolve));
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const done = pipeWithLeadIn(source, sink, "s16le", opened);
  for (const [i, c] of chunks.entries()) {
    if (i === openAfter) open();
    source.write(c);
    await new Promise((resolve) => setImmediate(resolve));
  }
  source.end();
  const dropped = await done;
  await sinkEnded;
  return { out: Buffer.concat(parts), dropped };
}

describe("lead-in of a raw live stream", () => {
  test("isSilent tells digital silence from a tone, in every raw format", () => {
    assert.equal(isSilent(silence(10), "s16le"), true);
    assert.equal(isSilent(tone(10), "s16le"), false);
    assert.equal(isSilent(Buffer.alloc(40, 128), "u8"), true);
    assert.equal(isSilent(Buffer.alloc(40, 0), "u8"), false);
    assert.equal(isSilent(Buffer.alloc(40), "f32le"), true);
  });

  test("leading silence before the player opens shrinks to LEAD_KEEP_MS; the sound is intact", async () => {
    const chunks = [silence(20), ...Array.from({ length: 30 }, () => silence(20)), tone(100), silence(200), tone(60)];
    const { out, dropped } = await run(chunks, 40);
    const total = chunks.reduce((n, c) => n + c.length, 0);
    assert.equal(out.length + dropped, total);
    assert.equal(dropped, 96 * (30 * 20 - LEAD_KEEP_MS));
    // Everything from the first sound on arrives unchanged.
    const tail = Buffer.concat(chunks.slice(31));
    assert.deepEqual(out.subarray(out.length - tail.length), tail);
  });

  test("once the player is open nothing is dropped, silence included", async () => {
    const chunks = [silence(20), silence(20), silence(500), tone(100), silence(300)];
    const { out, dropped } = await run(chunks, 1);
    assert.equal(dropped, 0);
    assert.deepEqual(out, Buffer.concat(chunks));
  });

  test("a body that is only silence ends the player's input", async () => {
    const { out, dropped } = await run([silence(20), silence(200), silence(200)], null);
    assert.equal(out.length + dropped, 96 * 420);
    assert.ok(out.length <= 96 * (20 + LEAD_KEEP_MS));
  });

  test("odd chunk boundaries keep whole samples", async () => {
    const all = Buffer.concat([silence(100), tone(50)]);
    const chunks = [all.subarray(0, 3), all.subarray(3, 1001), all.subarray(1001, 5001), all.subarray(5001)];
    const { out, dropped } = await run(chunks, null);
    assert.equal(out.length + dropped, all.length);
    assert.equal(dropped % 2, 0);
    assert.deepEqual(out.subarray(out.length - tone(50).length), tone(50));
  });
});
