/**
 * Paces a live headerless-PCM ingest into the player's stdin against the wall clock.
 *
 * Whatever is written into ffmpeg's stdin ahead of real time waits in the pipe (64 KB: ~680 ms of
 * s16le) and in pulse before it is heard, so every byte written early is latency. The buffer
 * therefore writes at most AHEAD_MS ahead of the wall clock: a real-time producer's bytes pass at
 * once, a faster producer is held here, and a full queue holds back the write callback — the
 * socket is then paused, and through it the HTTP body and the producer's TCP window (Rule 3: a
 * long file pushed as fast as possible takes about its duration, with memory flat).
 *
 * After a stall — the player ran dry because the network or ffmpeg's start-up held the audio
 * back — a live producer's backlog arrives at once, and played in full it would stay as delay for
 * the rest of the stream (the sink plays at exactly real time, so a backlog never drains). The
 * time the player ran dry is kept as a debt, and while more is queued than AHEAD_MS allows, silent
 * frames are dropped until the debt is paid. Sound is never dropped: speech after a stall comes
 * late until the next pause, then the stream is back in time. Before the player is open the clock
 * already runs, so leading silence that arrives while ffmpeg starts is dropped the same way.
 */
import { Writable } from "node:stream";
import type { RawFormat } from "./ops.ts";
import { SAMPLE_BYTES, bytesFor, durationMs, isSilent } from "./pcm.ts";

/** Written ahead of the wall clock: covers pulse's 60 ms buffer and a late timer on a busy box. */
export const AHEAD_MS = 100;
/**
 * A lead this far below zero counts as a stall. Pulse holds ~60 ms (player.ts) in front of the
 * sink, so a producer's ordinary jitter around real time never empties it and never makes debt.
 */
export const STALL_MS = 60;
/** The queue is topped up once the lead falls to this: 20 wake-ups a second for a fast producer. */
const REFILL_MS = AHEAD_MS / 2;
/** Unit of pacing and of silence detection: small enough to cut silence close to the sound. */
export const FRAME_MS = 10;
/** Queued beyond this, the write callback waits: back-pressure towards the producer. */
export const QUEUE_LIMIT_MS = 200;
/**
 * The most silence a stall makes droppable: ffmpeg starts in up to ~2 s on a loaded box
 * (media-pipeline.md), and network stalls last seconds. A producer quiet for longer has paused
 * rather than queued; dropping the pauses of whatever it sends next would shorten its speech.
 */
export const MAX_DEBT_MS = 3_000;

/** The wall clock and its timers; tests drive a virtual one. */
export interface JitterClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const wallClock: JitterClock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface JitterOptions {
  format: RawFormat;
  /** Settles when the player plays (its pulse output is connected); nothing is written before. */
  opened: Promise<void>;
  clock?: JitterClock;
}

export class JitterBuffer extends Writable {
  readonly #sink: Writable;
  readonly #format: RawFormat;
  readonly #clock: JitterClock;
  readonly #frameBytes: number;
  readonly #limitBytes: number;
  #queue: Buffer[] = [];
  #queuedBytes = 0;
  /** A partial sample carried to the next chunk. */
  #carry: Buffer = Buffer.alloc(0);
  /** When what was written so far has played out; null until the first byte arrived. */
  #playhead: number | null = null;
  #debtMs = 0;
  #open = false;
  #sinkFull = false;
  #timer: unknown = null;
  #heldWrite: (() => void) | null = null;
  #heldFinal: (() => void) | null = null;
  /** Bytes written into the sink, and silent bytes dropped to catch up. */
  written = 0;
  dropped = 0;

  constructor(sink: Writable, options: JitterOptions) {
    super();
    this.#sink = sink;
    this.#format = options.format;
    this.#clock = options.clock ?? wallClock;
    this.#frameBytes = bytesFor(this.#format, FRAME_MS);
    this.#limitBytes = bytesFor(this.#format, QUEUE_LIMIT_MS);
    sink.on("drain", () => {
      this.#sinkFull = false;
      this.#pump();
    });
    options.opened.then(
      () => {
        this.#open = true;
        this.#pump();
      },
      // The player failed: its owner ends the ingest; nothing here will ever be played.
      () => this.destroy(),
    );
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    const data = this.#carry.length > 0 ? Buffer.concat([this.#carry, chunk]) : chunk;
    const whole = data.length - (data.length % SAMPLE_BYTES[this.#format]);
    this.#carry = data.subarray(whole);
    for (let o = 0; o < whole; o += this.#frameBytes) this.#queue.push(data.subarray(o, Math.min(whole, o + this.#frameBytes)));
    this.#queuedBytes += whole;
    this.#playhead ??= this.#clock.now();
    this.#pump();
    if (this.#queuedBytes < this.#limitBytes) callback();
    else this.#heldWrite = callback;
  }

  override _final(callback: () => void): void {
    this.#heldFinal = callback;
    this.#pump();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#clearTimer();
    this.#queue = [];
    this.#queuedBytes = 0;
    this.#heldWrite = null;
    this.#heldFinal = null;
    callback(error);
  }

  #clearTimer(): void {
    if (this.#timer !== null) this.#clock.clearTimeout(this.#timer);
    this.#timer = null;
  }

  /** Writes what fits, drops what the debt allows, and settles the held callbacks. */
  #pump(): void {
    if (this.destroyed) return;
    this.#clearTimer();
    const now = this.#clock.now();
    let playhead = this.#playhead ?? now;
    if (now - playhead > STALL_MS) {
      // The player ran (or, not yet open, would have run) dry since `playhead`: a live producer
      // has that much of a backlog on its way.
      this.#debtMs = Math.min(MAX_DEBT_MS, this.#debtMs + (now - playhead));
      playhead = now;
    }
    const ending = this.#heldFinal !== null;
    const out: Buffer[] = [];
    for (let frame = this.#queue[0]; frame; frame = this.#queue[0]) {
      const ms = durationMs(this.#format, frame.length);
      const writable = this.#open && !this.#sinkFull;
      if (writable && (ending || playhead - now + ms <= AHEAD_MS)) {
        out.push(frame);
        playhead += ms;
      } else if (this.#debtMs > 0 && isSilent(frame, this.#format)) {
        this.#debtMs = Math.max(0, this.#debtMs - ms);
        this.dropped += frame.length;
      } else {
        break;
      }
      this.#queue.shift();
      this.#queuedBytes -= frame.length;
    }
    if (this.#playhead !== null) this.#playhead = playhead;
    if (out.length > 0) {
      const buf = Buffer.concat(out);
      this.written += buf.length;
      if (!this.#sink.write(buf)) this.#sinkFull = true;
    }
    if (this.#heldWrite && this.#queuedBytes < this.#limitBytes) {
      const callback = this.#heldWrite;
      this.#heldWrite = null;
      callback();
    }
    if (this.#queue.length === 0 && this.#heldFinal) {
      const callback = this.#heldFinal;
      this.#heldFinal = null;
      this.#sink.end();
      callback();
      return;
    }
    // More queued than fits: wake when the lead has fallen to REFILL_MS (drain and the opening
    // of the player wake the pump by themselves).
    if (this.#queue.length > 0 && this.#open && !this.#sinkFull) {
      this.#timer = this.#clock.setTimeout(() => {
        this.#timer = null;
        this.#pump();
      }, Math.max(1, playhead - now - REFILL_MS));
    }
  }
}
