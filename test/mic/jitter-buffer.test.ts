/**
 * The jitter buffer of a raw live stream (worker/playback/jitter-buffer.ts), on the real stream
 * code with a virtual clock: it writes at most AHEAD_MS ahead of the clock, holds a faster writer
 * back with a bounded queue, drops queued silence (never sound) after a stall, and drops leading
 * silence while the player is still starting.
 */
import assert from "node:assert/strict";
import { PassThrough, type Writable } from "node:stream";
import { describe, test } from "node:test";
import { AHEAD_MS, FRAME_MS, JitterBuffer, MAX_DEBT_MS, QUEUE_LIMIT_MS, STALL_MS, type JitterClock } from "../../worker/playback/jitter-buffer.ts";
import { isSilent, silence } from "../../worker/playback/pcm.ts";

/** s16le mono 48 kHz: 96 bytes a millisecond. */
const BPMS = 96;
const quiet = (ms: number): Buffer => silence("s16le", 48 * ms);
function tone(ms: number, from = 0): Buffer {
  const buf = Buffer.alloc(BPMS * ms);
  for (let i = 0; i < buf.length / 2; i++) buf.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 1000 * (from + i)) / 48000)), i * 2);
  return buf;
}

/** A clock that moves only when told to, firing its timers in order. */
class VirtualClock implements JitterClock {
  #now = 1_000;
  #timers: { at: number; fn: () => void; id: number }[] = [];
  #next = 0;
  now(): number {
    return this.#now;
  }
  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.#next;
    this.#timers.push({ at: this.#now + ms, fn, id });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.#timers = this.#timers.filter((t) => t.id !== handle);
  }
  /** Moves `ms` ahead, firing every timer due on the way at its own time. */
  async advance(ms: number): Promise<void> {
    const end = this.#now + ms;
    for (;;) {
      this.#timers.sort((a, b) => a.at - b.at);
      const due = this.#timers[0];
      if (!due || due.at > end) break;
      this.#timers.shift();
      this.#now = due.at;
      due.fn();
      await settle();
    }
    this.#now = end;
    await settle();
  }
}

/** Lets stream callbacks and promise reactions run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

interface Rig {
  clock: VirtualClock;
  jitter: JitterBuffer;
  /** Bytes that reached the sink, with the virtual time they arrived at. */
  out: { at: number; data: Buffer }[];
  received: () => Buffer;
  sinkEnded: Promise<void>;
  open: () => void;
}

function rig(opened = true): Rig {
  const clock = new VirtualClock();
  const sink = new PassThrough();
  const out: { at: number; data: Buffer }[] = [];
  sink.on("data", (d: Buffer) => out.push({ at: clock.now(), data: d }));
  const sinkEnded = new Promise<void>((resolve) => sink.once("end", resolve));
  let open: () => void = () => undefined;
  const openedPromise = opened ? Promise.resolve() : new Promise<void>((resolve) => (open = resolve));
  const jitter = new JitterBuffer(sink, { format: "s16le", opened: openedPromise, clock });
  return { clock, jitter, out, received: () => Buffer.concat(out.map((o) => o.data)), sinkEnded, open: () => open() };
}

/** Writes `buf` and resolves when the buffer accepted it (its write callback ran). */
const write = (jitter: Writable, buf: Buffer) => new Promise<void>((resolve, reject) => jitter.write(buf, (err) => (err ? reject(err) : resolve())));

describe("jitter buffer of a raw live stream", () => {
  test("a real-time producer's bytes pass at once and unchanged", async () => {
    const r = rig();
    await settle();
    const sent: Buffer[] = [];
    for (let i = 0; i < 50; i++) {
      const chunk = i % 10 < 5 ? tone(20, i * 960) : quiet(20);
      sent.push(chunk);
      await write(r.jitter, chunk);
      // Written the moment it arrived: no added delay.
      assert.equal(r.received().length, Buffer.concat(sent).length, `chunk ${i} held back`);
      await r.clock.advance(20);
    }
    assert.equal(r.jitter.dropped, 0);
    assert.deepEqual(r.received(), Buffer.concat(sent));
  });

  test("a faster producer is held to AHEAD_MS ahead of the clock, with a bounded queue (back-pressure)", async () => {
    const r = rig();
    await settle();
    const started = r.clock.now();
    const total = 3_000;
    const body = tone(total);
    let offset = 0;
    let accepted = 0;
    // Pushes as fast as the buffer takes it; counts what is buffered and never yet written.
    let maxHeld = 0;
    const pushing = (async () => {
      while (offset < body.length) {
        const n = Math.min(64 * 1024, body.length - offset);
        await write(r.jitter, body.subarray(offset, offset + n));
        offset += n;
        accepted = offset;
        maxHeld = Math.max(maxHeld, accepted - r.jitter.written);
      }
    })();
    for (let t = 0; t <= total + 200; t += 10) {
      await r.clock.advance(10);
      const elapsed = r.clock.now() - started;
      assert.ok(r.jitter.written <= (elapsed + AHEAD_MS + FRAME_MS) * BPMS, `at ${elapsed} ms: ${r.jitter.written / BPMS} ms written`);
    }
    await pushing;
    // Held back, not buffered: the queue limit plus one socket-sized chunk at most.
    assert.ok(maxHeld <= QUEUE_LIMIT_MS * BPMS + 64 * 1024 + 16 * 1024, `held ${maxHeld} bytes`);
    // The writer was not done before the clock had run through most of the audio.
    r.jitter.end();
    await r.sinkEnded;
    assert.equal(r.jitter.dropped, 0, "no stall, nothing dropped");
    assert.deepEqual(r.received(), body);
  });

  test("the writer's callback waits while the queue is full, and resumes as the clock runs", async () => {
    const r = rig();
    await settle();
    let done = false;
    void write(r.jitter, tone(1_000)).then(() => (done = true));
    await settle();
    assert.equal(done, false, "a second of audio at once is not accepted at once");
    await r.clock.advance(1_000 - QUEUE_LIMIT_MS + AHEAD_MS);
    assert.equal(done, true);
  });

  test("after a stall, queued silence is dropped to catch up; sound is never dropped", async () => {
    const r = rig();
    await settle();
    // Live for a second.
    for (let i = 0; i < 50; i++) {
      await write(r.jitter, tone(20, i * 960));
      await r.clock.advance(20);
    }
    // The network stalls for 800 ms, then the producer's backlog arrives at once: 800 ms of
    // silence, then speech, then more silence.
    await r.clock.advance(800);
    const backlog = [quiet(800), tone(300), quiet(500)];
    void write(r.jitter, Buffer.concat(backlog));
    for (let t = 0; t < 1_500; t += 10) await r.clock.advance(10);
    r.jitter.end();
    await r.sinkEnded;
    const out = r.received();
    // The stall's 800 ms are dropped from the silence (to a frame), the tone is intact and whole.
    assert.ok(Math.abs(r.jitter.dropped - 800 * BPMS) <= FRAME_MS * BPMS, `dropped ${r.jitter.dropped / BPMS} ms`);
    assert.equal(out.length + r.jitter.dropped, 50 * 20 * BPMS + 1_600 * BPMS);
    assert.ok(out.includes(tone(300)), "the speech after the stall arrives whole");
    // Only silence was dropped: the non-silent bytes in and out are the same.
    assert.equal(countLoud(out), 1_000 * BPMS + 300 * BPMS);
  });

  test("the tone after a stall plays about when it would have without the stall", async () => {
    const r = rig();
    await settle();
    for (let i = 0; i < 10; i++) {
      await write(r.jitter, quiet(20));
      await r.clock.advance(20);
    }
    await r.clock.advance(600);
    const resumed = r.clock.now();
    void write(r.jitter, Buffer.concat([quiet(600), tone(100)]));
    await r.clock.advance(300);
    const toneAt = r.out.find((o) => !isSilent(o.data, "s16le"))?.at;
    assert.notEqual(toneAt, undefined, "the tone was written");
    // Without dropping, the tone would wait behind 600 ms of silence.
    assert.ok((toneAt ?? Infinity) - resumed <= AHEAD_MS, `tone written ${(toneAt ?? 0) - resumed} ms after the backlog arrived`);
  });

  test("jitter within STALL_MS makes no debt: a steady producer's pauses are never cut", async () => {
    const r = rig();
    await settle();
    const sent: Buffer[] = [];
    for (let i = 0; i < 100; i++) {
      const chunk = i % 4 === 0 ? tone(40) : quiet(40);
      sent.push(chunk);
      await write(r.jitter, chunk);
      // Late by up to STALL_MS, then early again: on average real time.
      await r.clock.advance(i % 2 === 0 ? 40 + STALL_MS - 5 : 40 - STALL_MS + 5);
    }
    r.jitter.end();
    await r.sinkEnded;
    assert.equal(r.jitter.dropped, 0);
    assert.deepEqual(r.received(), Buffer.concat(sent));
  });

  test("leading silence that arrives while the player starts is dropped; the first sound is not", async () => {
    const r = rig(false);
    for (let i = 0; i < 40; i++) {
      await write(r.jitter, quiet(20));
      await r.clock.advance(20);
    }
    await write(r.jitter, tone(100));
    assert.equal(r.out.length, 0, "nothing is written before the player is open");
    r.open();
    await settle();
    const out = r.received();
    assert.ok(out.length <= (STALL_MS + 2 * FRAME_MS + 100) * BPMS, `${out.length / BPMS} ms written, mostly the leading silence`);
    assert.deepEqual(out.subarray(out.length - tone(100).length), tone(100));
  });

  test("a long pause makes at most MAX_DEBT_MS of silence droppable", async () => {
    const r = rig();
    await settle();
    await write(r.jitter, tone(20));
    await r.clock.advance(MAX_DEBT_MS * 3);
    // Then a fast push of silence: only the capped debt is dropped.
    void write(r.jitter, quiet(MAX_DEBT_MS * 2));
    r.jitter.end();
    await r.clock.advance(MAX_DEBT_MS * 2);
    await r.sinkEnded;
    assert.ok(r.jitter.dropped <= (MAX_DEBT_MS + FRAME_MS) * BPMS, `dropped ${r.jitter.dropped / BPMS} ms`);
  });

  test("odd chunk boundaries keep whole samples; end() flushes the queue and ends the sink", async () => {
    const r = rig();
    await settle();
    const all = Buffer.concat([tone(500), quiet(300)]);
    const cuts = [0, 3, 1001, 5001, 40_001, all.length];
    for (let i = 0; i + 1 < cuts.length; i++) void write(r.jitter, all.subarray(cuts[i], cuts[i + 1]));
    r.jitter.end();
    await r.clock.advance(1_000);
    await r.sinkEnded;
    assert.deepEqual(r.received(), all);
  });

  test("destroy() stops pacing: no write after it", async () => {
    const r = rig();
    await settle();
    void write(r.jitter, tone(1_000)).catch(() => undefined);
    await settle();
    const before = r.jitter.written;
    r.jitter.destroy();
    await r.clock.advance(2_000);
    assert.equal(r.jitter.written, before);
  });

  test("isSilent tells digital silence from a tone, in every raw format", () => {
    assert.equal(isSilent(quiet(10), "s16le"), true);
    assert.equal(isSilent(tone(10), "s16le"), false);
    assert.equal(isSilent(silence("u8", 40), "u8"), true);
    assert.equal(isSilent(Buffer.alloc(40, 0), "u8"), false);
    assert.equal(isSilent(silence("f32le", 40), "f32le"), true);
  });
});

/** Bytes of 10 ms frames that are not silent. */
function countLoud(buf: Buffer): number {
  let loud = 0;
  for (let o = 0; o < buf.length; o += 10 * BPMS) {
    const frame = buf.subarray(o, o + 10 * BPMS);
    if (!isSilent(frame, "s16le")) loud += frame.length;
  }
  return loud;
}
