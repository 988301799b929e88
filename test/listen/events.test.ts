/**
 * The listener's event input (shared/listen/events.ts) through the worker's listen hub, with a
 * real PulseAudio daemon and taps: events published by the participant timeline's emitter (#17,
 * connected through worker/listen/timeline-adapter.ts) and status events reach every listener
 * that asked for events, in the order they were emitted, while its audio stream (raw PCM written
 * by the tap into the socket) flows; a malformed event is dropped; a listener without events gets
 * audio only; `end` closes every listener, and stopping the audio ends the audio streams.
 */
import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { createLogger } from "../../shared/log/logger.ts";
import { CLOSE, CLOSE_REASON, frameBytes } from "../../shared/listen/protocol.ts";
import { PcmFramer } from "../../shared/listen/framer.ts";
import { FRAME_KIND, FrameDecoder } from "../../shared/listen/wire.ts";
import type { SessionStatus } from "../../shared/ipc/messages.ts";
import { startPulse, type PulseDaemon } from "../../worker/audio/pulse.ts";
import { createListen, type Listen } from "../../worker/listen/index.ts";
import { connectTimeline } from "../../worker/listen/timeline-adapter.ts";
import { waitFor, type Json } from "./helpers.ts";

interface Client {
  events: Json[];
  audio: Buffer[];
  /** Arrival order across both connections: "a" for audio, the event's type otherwise. */
  order: string[];
  end: Json | null;
  closed: Promise<void>;
  audioEnded: Promise<void>;
}

/** A listener as the control plane opens it: its events connection and an audio stream of its format. */
function client(path: string, format: { sample_rate: 8000 | 16000; channels: 1 }, events: boolean): Client {
  const eventsSocket = connect(path);
  const audioSocket: Socket = connect(path);
  const c: Client = {
    events: [],
    audio: [],
    order: [],
    end: null,
    closed: new Promise((r) => eventsSocket.once("close", () => r())),
    audioEnded: new Promise((r) => audioSocket.once("close", () => r())),
  };
  const decoder = new FrameDecoder();
  eventsSocket.on("data", (chunk: Buffer) => {
    for (const f of decoder.push(chunk)) {
      if (f.kind === FRAME_KIND.event) {
        const e = JSON.parse(f.payload.toString()) as Json;
        c.events.push(e);
        c.order.push(String(e.type));
      } else c.end = JSON.parse(f.payload.toString()) as Json;
    }
  });
  const framer = new PcmFramer(frameBytes({ sampleRate: format.sample_rate, channels: format.channels }));
  audioSocket.on("data", (chunk: Buffer) => {
    for (const frame of framer.push(chunk)) {
      c.audio.push(frame);
      c.order.push("a");
    }
  });
  eventsSocket.write(`${JSON.stringify({ stream: "events", events })}\n`);
  audioSocket.write(`${JSON.stringify({ stream: "audio", ...format })}\n`);
  return c;
}

describe("listen hub: events in order between the audio (real PulseAudio)", { timeout: 60_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "listen-events-"));
  const logger = createLogger({ level: "warn" });
  let pulse: PulseDaemon;
  let listen: Listen;
  let status: SessionStatus = "recording";
  before(async () => {
    pulse = await startPulse({ dir, logger, mic: false });
    listen = createListen({ workDir: dir, pulseEnv: pulse.env, source: pulse.recMonitor, mic: false, logger, status: () => status });
  });
  after(async () => {
    await listen.close();
    await pulse.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("listen_open answers 409 outside the call, the socket path in it", async () => {
    status = "lobby";
    const refused = await listen.handle({ type: "request", id: 1, op: "listen_open", args: {} });
    assert.equal(refused.ok, false);
    assert.equal(refused.error?.status, 409);
    status = "recording";
    const opened = await listen.handle({ type: "request", id: 2, op: "listen_open", args: {} });
    assert.equal(opened.ok, true);
    assert.equal((opened.result as Json).socketPath, join(dir, "listen.sock"));
  });

  test("timeline and status events arrive in emitted order, interleaved with 20 ms frames", async () => {
    const path = join(dir, "listen.sock");
    const withEvents = client(path, { sample_rate: 16000, channels: 1 }, true);
    const audioOnly = client(path, { sample_rate: 8000, channels: 1 }, false);
    await waitFor("audio at both listeners", () => withEvents.audio.length >= 5 && audioOnly.audio.length >= 5);

    const timeline = new EventEmitter();
    const disconnect = connectTimeline(timeline, listen, logger);
    const alice = { id: "p-1", name: "Alice" };
    const bob = { id: "p-2", name: "Bob" };
    timeline.emit("speech_started", { participant: alice, offset_seconds: 1.25 });
    timeline.emit("participant_joined", { participant: bob, offset_seconds: 1.5 });
    // Missing participant: not forwarded half-formed.
    timeline.emit("speech_started", { offset_seconds: 2 });
    await waitFor("audio after the first events", () => {
      const joined = withEvents.order.indexOf("participant_joined");
      return joined >= 0 && withEvents.order.lastIndexOf("a") > joined;
    });
    timeline.emit("speech_stopped", { type: "speech_stopped", participant: alice, offset_seconds: 3.5 });
    timeline.emit("participant_left", { participant: bob, offset_seconds: 4 });
    listen.publish({ type: "status", status: "recording" });
    await waitFor("every event", () => withEvents.events.length >= 6);
    disconnect();
    timeline.emit("speech_started", { participant: bob, offset_seconds: 5 });

    assert.deepEqual(withEvents.events, [
      { type: "status", status: "recording" },
      { type: "speech_started", participant: alice, offset_seconds: 1.25 },
      { type: "participant_joined", participant: bob, offset_seconds: 1.5 },
      { type: "speech_stopped", participant: alice, offset_seconds: 3.5 },
      { type: "participant_left", participant: bob, offset_seconds: 4 },
      { type: "status", status: "recording" },
    ]);
    // Audio flowed between them: the events are not batched at the end.
    const i = withEvents.order.indexOf("participant_joined");
    const j = withEvents.order.indexOf("speech_stopped");
    assert.ok(withEvents.order.slice(i, j).includes("a"));
    assert.equal(audioOnly.events.length, 0);
    for (const f of withEvents.audio) assert.equal(f.length, frameBytes({ sampleRate: 16000, channels: 1 }));
    for (const f of audioOnly.audio) assert.equal(f.length, frameBytes({ sampleRate: 8000, channels: 1 }));

    // The session ends: the final status, then `end`, then the socket closes.
    status = "stopped";
    listen.publish({ type: "status", status: "stopped" });
    await listen.stopAudio();
    await Promise.all([withEvents.audioEnded, audioOnly.audioEnded]);
    assert.deepEqual(listen.pids.captures, []);
    listen.end();
    await Promise.all([withEvents.closed, audioOnly.closed]);
    assert.deepEqual(withEvents.events.at(-1), { type: "status", status: "stopped" });
    assert.deepEqual(withEvents.end, { code: CLOSE.normal, reason: CLOSE_REASON.sessionEnded });
    assert.deepEqual(audioOnly.end, { code: CLOSE.normal, reason: CLOSE_REASON.sessionEnded });
  });
});
