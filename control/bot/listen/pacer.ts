/**
 * Back-pressure of one listener, without unbounded memory (issue #18). What the consumer has read
 * is learned from WebSocket pings: a ping sent after N ms of audio is answered (RFC 6455 5.5.2)
 * only once the consumer has read everything before it, so its pong acknowledges N ms. Neither
 * `bufferedAmount` nor the socket's drain can tell this: the kernel's socket buffers (up to 4 MB
 * here, minutes of 16 kHz audio) hide a stalled reader from both.
 *
 * - Up to FLIGHT_MS of audio may be unacknowledged: enough for a consumer ~500 ms of round trip
 *   away to be fed at full speed (pings go every PING_MS), and it bounds what sits in socket buffers.
 * - Beyond that, frames wait here, up to QUEUE_MS; past it the OLDEST frames are dropped (a
 *   listener wants what is said now, never a stale second instead), and the consumer gets
 *   `{type: "overrun", dropped_ms}` ahead of the audio that follows the gap.
 * - Behind = unacknowledged + queued + dropped since the queue last ran empty: the time the
 *   consumer would be behind real time had nothing been dropped. At CUTOFF_MS it is cut off
 *   (1008), after one last `overrun` counting everything it lost.
 *
 * Memory per listener is therefore at most FLIGHT_MS + QUEUE_MS of audio and MAX_EVENTS events,
 * whatever the consumer does, and nothing here ever waits on the worker or on another listener.
 */
import type { OverrunEvent } from "../../../shared/listen/events.ts";
import { FRAME_MS } from "../../../shared/listen/protocol.ts";

export const FLIGHT_MS = 1_000;
export const QUEUE_MS = 1_000;
/** The issue: a consumer 5 s behind is disconnected. */
export const CUTOFF_MS = 5_000;
/** Events are a few per second at most; this many waiting means the consumer is gone. */
export const MAX_EVENTS = 256;

type Item = { kind: "audio"; data: Buffer } | { kind: "text"; data: string; overrun?: OverrunEvent };

export interface PacerSink {
  /** Hands a frame to the WebSocket (binary for audio, text for JSON). */
  send(data: Buffer | string): void;
  /** Sends a ping carrying `payload`; its pong comes back through `Pacer.pong`. */
  ping(payload: Buffer): void;
  /** The consumer fell CUTOFF_MS behind. */
  cutOff(behindMs: number): void;
}

export class Pacer {
  readonly #sink: PacerSink;
  #queue: Item[] = [];
  #queuedAudio = 0;
  #queuedEvents = 0;
  /** Audio handed to the socket and acknowledged by the consumer, in frames. */
  #sent = 0;
  #acked = 0;
  #pingSeq = 0;
  /** Ping sequence → frames sent before it; the oldest are forgotten past MAX_PINGS. */
  readonly #pings = new Map<number, number>();
  #droppedSinceCaughtUp = 0;
  #droppedTotal = 0;
  #cut = false;

  constructor(sink: PacerSink) {
    this.#sink = sink;
  }

  get behindMs(): number {
    return (this.#sent - this.#acked + this.#queuedAudio + this.#droppedSinceCaughtUp) * FRAME_MS;
  }

  get droppedMs(): number {
    return this.#droppedTotal * FRAME_MS;
  }

  /** Bytes held here (the queue), for the memory bound. */
  get queuedBytes(): number {
    let n = 0;
    for (const item of this.#queue) n += item.kind === "audio" ? item.data.length : Buffer.byteLength(item.data);
    return n;
  }

  audio(frame: Buffer): void {
    if (this.#cut) return;
    this.#queue.push({ kind: "audio", data: frame });
    this.#queuedAudio++;
    this.#pump();
    if (this.#queuedAudio * FRAME_MS > QUEUE_MS) this.#dropOldest(this.#queuedAudio - QUEUE_MS / FRAME_MS);
    this.#check();
  }

  text(json: string): void {
    if (this.#cut) return;
    this.#queue.push({ kind: "text", data: json });
    this.#queuedEvents++;
    if (this.#queuedEvents > MAX_EVENTS) {
      const i = this.#queue.findIndex((item) => item.kind === "text" && !item.overrun);
      if (i >= 0) {
        this.#queue.splice(i, 1);
        this.#queuedEvents--;
      }
    }
    this.#pump();
  }

  /** Sends a ping marking the audio sent so far; call every PING_MS (of audio taken in). */
  tick(): void {
    if (this.#cut) return;
    const seq = ++this.#pingSeq;
    this.#pings.set(seq, this.#sent);
    if (this.#pings.size > MAX_PINGS) this.#pings.delete(seq - MAX_PINGS);
    const payload = Buffer.alloc(4);
    payload.writeUInt32BE(seq);
    this.#sink.ping(payload);
  }

  pong(payload: Buffer): void {
    if (payload.length !== 4) return;
    const seq = payload.readUInt32BE(0);
    const sent = this.#pings.get(seq);
    if (sent === undefined) return;
    // A pong may answer only the latest of several pings (RFC 6455 5.5.3): older ones are implied.
    for (const s of this.#pings.keys()) if (s <= seq) this.#pings.delete(s);
    this.#acked = Math.max(this.#acked, sent);
    this.#pump();
  }

  /** Everything still queued goes out (the session ended; the close frame follows it). */
  flush(): void {
    for (const item of this.#queue.splice(0)) this.#sink.send(item.data);
    this.#queuedAudio = 0;
    this.#queuedEvents = 0;
  }

  stop(): void {
    this.#cut = true;
    this.#queue = [];
    this.#queuedAudio = 0;
    this.#queuedEvents = 0;
    this.#pings.clear();
  }

  #pump(): void {
    while (this.#queue.length > 0) {
      // A full flight means the consumer is not reading: events wait too (in order with the audio).
      if ((this.#sent - this.#acked) * FRAME_MS >= FLIGHT_MS) break;
      const head = this.#queue[0] as Item;
      this.#queue.shift();
      if (head.kind === "audio") {
        this.#queuedAudio--;
        this.#sent++;
        this.#sink.send(head.data);
      } else {
        this.#queuedEvents--;
        this.#sink.send(head.overrun ? JSON.stringify(head.overrun) : head.data);
      }
    }
    if (this.#queuedAudio === 0) this.#droppedSinceCaughtUp = 0;
  }

  #dropOldest(frames: number): void {
    let dropped = 0;
    for (let i = 0; i < this.#queue.length && dropped < frames; ) {
      if (this.#queue[i]?.kind === "audio") {
        this.#queue.splice(i, 1);
        dropped++;
      } else i++;
    }
    this.#queuedAudio -= dropped;
    this.#droppedSinceCaughtUp += dropped;
    this.#droppedTotal += dropped;
    // One notice per gap, at the head: it grows while the gap does and goes out before the audio after it.
    const head = this.#queue[0];
    if (head?.kind === "text" && head.overrun) head.overrun.dropped_ms += dropped * FRAME_MS;
    else {
      this.#queue.unshift({ kind: "text", data: "", overrun: { type: "overrun", dropped_ms: dropped * FRAME_MS } });
      this.#queuedEvents++;
    }
  }

  #check(): void {
    const behind = this.behindMs;
    if (behind >= CUTOFF_MS && !this.#cut) {
      const last = this.#lastWords();
      this.stop();
      for (const data of last) this.#sink.send(data);
      this.#sink.cutOff(behind);
    }
  }

  /**
   * What a consumer cut off still gets, behind the audio in flight and before the close frame: one
   * `overrun` counting all it lost (the gap not yet announced and the audio queued here, which now
   * never goes), then the events still queued.
   */
  #lastWords(): string[] {
    let lost = 0;
    const events: string[] = [];
    for (const item of this.#queue) {
      if (item.kind === "audio") lost += FRAME_MS;
      else if (item.overrun) lost += item.overrun.dropped_ms;
      else events.push(item.data);
    }
    this.#droppedTotal += this.#queuedAudio;
    const overrun: OverrunEvent = { type: "overrun", dropped_ms: lost };
    return lost > 0 ? [JSON.stringify(overrun), ...events] : events;
  }
}

/**
 * A ping every this much audio (bridge.ts sends it with that audio): what a consumer has read is
 * known to within it, far inside FLIGHT_MS, so one that keeps up is never held back; each pong
 * wakes the control plane (twice a second, not five times as with 200 ms).
 */
export const PING_MS = 500;
/** Pings kept for matching: 5 s of them at PING_MS, the most a listener can be behind. */
const MAX_PINGS = CUTOFF_MS / PING_MS + 10;
