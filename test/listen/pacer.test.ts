/**
 * The listener's back-pressure (control/bot/listen/pacer.ts) driven frame by frame: what a slow
 * consumer loses is the oldest audio, never the newest, announced by one `overrun` per gap ahead
 * of the audio after it; a consumer 5 s behind is cut off; what is held stays bounded whatever
 * the consumer does. The end-to-end behaviour with real sockets is in listen-audio.test.ts.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { CUTOFF_MS, FLIGHT_MS, MAX_EVENTS, Pacer, QUEUE_MS } from "../../control/bot/listen/pacer.ts";
import { FRAME_MS } from "../../shared/listen/protocol.ts";

/** A frame whose first 4 bytes number it, so the order and identity of what was sent shows. */
const frame = (n: number): Buffer => {
  const b = Buffer.alloc(640);
  b.writeUInt32BE(n, 0);
  return b;
};

function harness() {
  const sent: (number | string)[] = [];
  const pings: Buffer[] = [];
  let cut: number | null = null;
  const pacer = new Pacer({
    send: (data) => sent.push(typeof data === "string" ? data : data.readUInt32BE(0)),
    ping: (p) => pings.push(p),
    cutOff: (behind) => (cut = behind),
  });
  return { pacer, sent, pings, cut: () => cut };
}

describe("listener pacer", () => {
  test("a consumer that answers pings gets every frame in order, at once", () => {
    const h = harness();
    for (let n = 0; n < 500; n++) {
      h.pacer.audio(frame(n));
      if (n % 10 === 9) {
        h.pacer.tick();
        h.pacer.pong(h.pings.at(-1) as Buffer);
      }
    }
    assert.deepEqual(h.sent, [...Array(500).keys()]);
    assert.equal(h.pacer.droppedMs, 0);
    assert.equal(h.cut(), null);
  });

  test("unacknowledged audio is capped at FLIGHT_MS; the rest waits and goes out on the pong", () => {
    const h = harness();
    h.pacer.tick();
    const inFlight = FLIGHT_MS / FRAME_MS;
    for (let n = 0; n < inFlight + 10; n++) h.pacer.audio(frame(n));
    assert.equal(h.sent.length, inFlight);
    // The ping was sent before any audio: its pong acknowledges nothing, and nothing moves.
    h.pacer.pong(h.pings[0] as Buffer);
    assert.equal(h.sent.length, inFlight);
    h.pacer.tick();
    h.pacer.pong(h.pings[1] as Buffer);
    assert.deepEqual(h.sent, [...Array(inFlight + 10).keys()]);
  });

  test("a slow consumer loses the OLDEST frames, and one overrun per gap comes first with their duration", () => {
    const h = harness();
    const inFlight = FLIGHT_MS / FRAME_MS;
    const queued = QUEUE_MS / FRAME_MS;
    const total = inFlight + queued + 30;
    for (let n = 0; n < total; n++) h.pacer.audio(frame(n));
    assert.equal(h.pacer.droppedMs, 30 * FRAME_MS);
    h.pacer.tick();
    h.pacer.pong(h.pings[0] as Buffer);
    const after = h.sent.slice(inFlight);
    assert.deepEqual(JSON.parse(String(after[0])), { type: "overrun", dropped_ms: 30 * FRAME_MS });
    // Frames inFlight .. inFlight+29 were the oldest waiting: gone. The newest all arrive, in order.
    assert.deepEqual(after.slice(1), [...Array(queued).keys()].map((i) => inFlight + 30 + i));
  });

  test("events keep their place; only audio is dropped", () => {
    const h = harness();
    const inFlight = FLIGHT_MS / FRAME_MS;
    for (let n = 0; n < inFlight + 10; n++) h.pacer.audio(frame(n));
    h.pacer.text('{"type":"speech_started"}');
    for (let n = inFlight + 10; n < inFlight + QUEUE_MS / FRAME_MS + 15; n++) h.pacer.audio(frame(n));
    h.pacer.tick();
    h.pacer.pong(h.pings[0] as Buffer);
    const rest = h.sent.slice(inFlight);
    // The 15 oldest waiting frames went (the 10 before the event, 5 after it); the event stayed.
    assert.deepEqual(JSON.parse(String(rest[0])), { type: "overrun", dropped_ms: 15 * FRAME_MS });
    assert.equal(rest[1], '{"type":"speech_started"}');
    assert.equal(rest[2], inFlight + 15);
  });

  test(`a consumer that stops reading is cut off once ${CUTOFF_MS} ms behind, holding at most FLIGHT_MS + QUEUE_MS`, () => {
    const h = harness();
    let maxQueued = 0;
    let frames = 0;
    while (h.cut() === null && frames < 10_000) {
      h.pacer.audio(frame(frames++));
      if (frames % 10 === 0) h.pacer.tick();
      maxQueued = Math.max(maxQueued, h.pacer.queuedBytes);
    }
    assert.equal(frames * FRAME_MS, CUTOFF_MS, "cut off exactly when 5 s of audio went unread");
    assert.ok((h.cut() ?? 0) >= CUTOFF_MS);
    assert.ok(maxQueued <= (QUEUE_MS / FRAME_MS) * 640 + 100, `held ${maxQueued} bytes`);
    // The flight, then one overrun counting everything it lost (the 3 s dropped and the queued
    // second that now never goes), ahead of the close.
    assert.equal(h.sent.length, FLIGHT_MS / FRAME_MS + 1);
    assert.deepEqual(JSON.parse(String(h.sent.at(-1))), { type: "overrun", dropped_ms: CUTOFF_MS - FLIGHT_MS });
    assert.equal(h.pacer.droppedMs, CUTOFF_MS - FLIGHT_MS);
    // After the cut nothing more is taken in or sent.
    h.pacer.audio(frame(1));
    assert.equal(h.pacer.queuedBytes, 0);
  });

  test("a consumer that catches up is no longer behind: later short stalls do not add up to a cut", () => {
    const h = harness();
    let n = 0;
    for (let round = 0; round < 10; round++) {
      // 3 s without reading (more than flight + queue: frames are dropped), then it reads everything.
      for (let i = 0; i < 150; i++) h.pacer.audio(frame(n++));
      h.pacer.tick();
      h.pacer.pong(h.pings.at(-1) as Buffer);
      h.pacer.tick();
      h.pacer.pong(h.pings.at(-1) as Buffer);
    }
    assert.equal(h.cut(), null);
    assert.ok(h.pacer.droppedMs > 0);
  });

  test("events waiting for a consumer that does not read are bounded too (the oldest go)", () => {
    const h = harness();
    for (let n = 0; n < FLIGHT_MS / FRAME_MS; n++) h.pacer.audio(frame(n));
    for (let i = 0; i < MAX_EVENTS * 3; i++) h.pacer.text(`{"i":${i}}`);
    assert.ok(h.pacer.queuedBytes <= MAX_EVENTS * 12, `${h.pacer.queuedBytes} bytes`);
    h.pacer.tick();
    h.pacer.pong(h.pings[0] as Buffer);
    const events = h.sent.slice(FLIGHT_MS / FRAME_MS);
    assert.equal(events.length, MAX_EVENTS);
    assert.equal(events.at(-1), `{"i":${MAX_EVENTS * 3 - 1}}`);
  });
});
