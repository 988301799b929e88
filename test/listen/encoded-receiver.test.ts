/**
 * The worker's end of the page tap's encoded path (worker/listen/page-tap/encoded-receiver.ts),
 * over a real loopback WebSocket: records of G.711 frames (what a plain RTP server sends; the
 * Opus path runs in encoded-path.test.ts, from a real browser) are decoded per source, a lost
 * frame or two is stood in for by the one before (timed by the RTP timestamps, not the sequence
 * numbers, which padding also takes), a frame without payload (padding) is skipped and the frames
 * after it in its message heard, a repeat or a late frame is dropped, a
 * source numbered from 1 again (the page's next document) starts over, a malformed record ends
 * its message only, and a client on another path is refused before the upgrade.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import WebSocket from "ws";
import { createLogger } from "../../shared/log/logger.ts";
import { EncodedReceiver } from "../../worker/listen/page-tap/encoded-receiver.ts";
import { ENCODED_CODECS, ENCODED_RECORD_HEADER_BYTES } from "../../worker/listen/page-tap/encoded-script.ts";
import { G711_RATE } from "../../worker/listen/page-tap/g711.ts";

const logger = createLogger({ level: "silent" });
const FRAME = 160; // 20 ms at 8 kHz
/** µ-law 0x80 is full scale (+32124/32768) and 0xff zero: a loud frame and a quiet one. */
const LOUD = 0x80;
const QUIET = 0xff;

const record = (id: number, seq: number, ts: number, byte: number, codec: number = ENCODED_CODECS["audio/pcmu"]): Buffer => {
  const r = Buffer.alloc(ENCODED_RECORD_HEADER_BYTES + FRAME, byte);
  r.writeUInt16LE(r.length, 0);
  r.writeUInt32LE(id, 2);
  r.writeUInt32LE(ts, 6);
  r.writeUInt16LE(seq, 10);
  r.writeUInt8(codec, 12);
  return r;
};

describe("encoded path receiver", () => {
  let receiver: EncodedReceiver;
  let ws: WebSocket;
  const got: { id: string; rate: number; channels: number; data: Float32Array }[] = [];

  before(async () => {
    receiver = await EncodedReceiver.start(logger);
    receiver.serve(1, 16_000, (id, rate, channels, data) => got.push({ id, rate, channels, data: data.slice() }));
    ws = new WebSocket(receiver.url);
    await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
  });
  after(async () => {
    ws?.close();
    await receiver?.close();
  });

  /** Sends `msg` and waits until `n` more pieces of audio came out (or 2 s). */
  const send = async (msg: Buffer, n: number): Promise<typeof got> => {
    const from = got.length;
    ws.send(msg);
    const deadline = Date.now() + 2_000;
    while (got.length < from + n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 50));
    return got.slice(from);
  };

  test("a source's frames come out decoded at 8 kHz, several records to a message", async () => {
    const out = await send(Buffer.concat([record(7, 100, 16_000, LOUD), record(7, 101, 16_160, LOUD)]), 2);
    assert.equal(out.length, 2);
    for (const piece of out) {
      assert.deepEqual([piece.id, piece.rate, piece.channels, piece.data.length], ["7", G711_RATE, 1, FRAME]);
      assert.ok(Math.abs(piece.data[0]! - 32124 / 32768) < 1e-6, `sample ${piece.data[0]}`);
    }
  });

  test("two lost frames are stood in for by the frame before them; a repeat and a late frame are dropped", async () => {
    // 101 (loud) was the last; 102 and 103 were lost: their 40 ms are 101 twice, then 104 (quiet).
    const out = await send(Buffer.concat([record(7, 104, 16_640, QUIET), record(7, 104, 16_640, LOUD), record(7, 103, 16_480, LOUD)]), 3);
    assert.deepEqual(out.map((p) => p.data.length), [FRAME, FRAME, FRAME]);
    assert.ok(out[0]!.data[0]! > 0.9 && out[1]!.data[0]! > 0.9, "the lost frames are the one before them");
    assert.ok(out[2]!.data.every((v) => Math.abs(v) < 1e-3), "then the frame itself; nothing of the repeat or the late one");
  });

  test("a packet that carries no audio (a sequence number with no time of its own) leaves nothing to fill", async () => {
    const out = await send(record(7, 106, 16_800, QUIET), 1);
    assert.deepEqual(out.map((p) => p.data.length), [FRAME]);
  });

  test("a frame without payload (a sender's padding) is skipped, and the frames after it in its message are heard", async () => {
    // Chromium's padding takes a sequence number and the last frame's timestamp: nothing is lost.
    const padding = record(7, 108, 16_960, QUIET).subarray(0, ENCODED_RECORD_HEADER_BYTES);
    padding.writeUInt16LE(ENCODED_RECORD_HEADER_BYTES, 0);
    const out = await send(Buffer.concat([record(7, 107, 16_960, LOUD), padding, record(7, 109, 17_120, QUIET)]), 2);
    assert.deepEqual(out.map((p) => p.data.length), [FRAME, FRAME], "two frames, nothing stood in");
    assert.ok(out[0]!.data[0]! > 0.9, "the frame before the padding");
    assert.ok(out[1]!.data.every((v) => Math.abs(v) < 1e-3), "the frame after it");
  });

  test("a gap longer than five frames is left to the mix (no silence made up)", async () => {
    const out = await send(record(7, 120, 20_000, QUIET), 1);
    assert.equal(out.length, 1);
    assert.equal(out[0]!.data.length, FRAME);
    assert.ok(out[0]!.data.every((v) => Math.abs(v) < 1e-3), "µ-law 0xff is silence");
  });

  test("a source numbered again from the start (the page's next document) is heard at once", async () => {
    const out = await send(record(7, 3, 480, LOUD), 1);
    assert.equal(out.length, 1);
    assert.ok(out[0]!.data[0]! > 0.9);
  });

  test("A-law and µ-law sources side by side; a record of an unknown codec or a cut record is skipped", async () => {
    const cut = record(9, 1, 0, LOUD).subarray(0, 40);
    const out = await send(Buffer.concat([record(8, 1, 0, 0xd5, ENCODED_CODECS["audio/pcma"]), record(9, 1, 0, QUIET, 99), cut]), 1);
    assert.deepEqual(out.map((p) => p.id), ["8"]);
    // A-law 0xd5 is the smallest positive step (+8/32768).
    assert.ok(Math.abs(out[0]!.data[0]! - 8 / 32768) < 1e-6, `sample ${out[0]!.data[0]}`);
  });

  test("a stereo listener gets each source in two channels", async () => {
    receiver.serve(2, 16_000, (id, rate, channels, data) => got.push({ id, rate, channels, data: data.slice() }));
    const out = await send(record(7, 200, 40_000, LOUD), 1);
    assert.deepEqual([out[0]!.channels, out[0]!.data.length], [2, 2 * FRAME]);
    assert.equal(out[0]!.data[0], out[0]!.data[1]);
  });

  test("a listener's format changing while an Opus decoder starts up frees it without a throw (the worker went down on it)", async () => {
    const onAudio = (id: string, rate: number, channels: number, data: Float32Array) => got.push({ id, rate, channels, data: data.slice() });
    // Garbage as Opus: the decoder is made at the first record, and starts asynchronously.
    ws.send(record(11, 1, 0, 0x55, ENCODED_CODECS["audio/opus"]));
    for (let i = 0; i < 100; i++) {
      receiver.serve(i % 2 === 0 ? 2 : 1, i % 2 === 0 ? 48_000 : 16_000, onAudio);
      ws.send(record(11, 2 + i, 960 * (1 + i), 0x55, ENCODED_CODECS["audio/opus"]));
      await new Promise((r) => setTimeout(r, 2));
    }
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(ws.readyState, WebSocket.OPEN, "the receiver still takes messages");
  });

  test("a client on any other path is refused before the upgrade", async () => {
    const wrong = new WebSocket(receiver.url.replace(/\/[0-9a-f]+$/, "/nope"));
    const status = await new Promise<number>((resolve) => {
      wrong.once("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      wrong.once("open", () => resolve(101));
      wrong.once("error", () => undefined);
    });
    wrong.terminate();
    assert.equal(status, 401);
  });
});
