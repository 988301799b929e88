/**
 * Feeds a live headerless-PCM ingest into the player's stdin without letting the player's
 * start-up become permanent latency.
 *
 * ffmpeg needs 0.1-2 s on a loaded box to start and connect its pulse output (media-pipeline.md);
 * a real-time producer keeps sending meanwhile, and with a plain pipe everything it sent waits
 * in the socket buffers. The sink then plays at exactly real time, so that backlog never drains:
 * bench/mic.ts measured 360 ms from write to the `mic` sink on every burst of a run whose
 * ffmpeg started slowly, against 30-60 ms when it started fast.
 *
 * Producers usually open with silence (connect, then speak). Until the player is open, leading
 * silence is therefore dropped except for its last LEAD_KEEP_MS; the first chunk is passed at once
 * so that ffmpeg can start. From the first non-silent sample on, or once the player is open,
 * every byte is piped as before, with back-pressure (a faster-than-real-time producer is still
 * held back, and nothing that is not leading silence is ever dropped).
 */
import type { Readable, Writable } from "node:stream";
import type { RawFormat } from "./ops.ts";

/** Leading silence kept in front of the first sound: enough for pulse to start cleanly. */
export const LEAD_KEEP_MS = 40;
const RATE = 48_000;
/** Below this (fraction of full scale, about -50 dBFS) a sample counts as silence. */
const SILENCE_LEVEL = 0.003;

const BYTES: Record<RawFormat, number> = { s16le: 2, s16be: 2, s32le: 4, f32le: 4, u8: 1 };

function sampleAt(buf: Buffer, offset: number, format: RawFormat): number {
  switch (format) {
    case "s16le":
      return buf.readInt16LE(offset) / 32768;
    case "s16be":
      return buf.readInt16BE(offset) / 32768;
    case "s32le":
      return buf.readInt32LE(offset) / 2147483648;
    case "f32le":
      return buf.readFloatLE(offset);
    case "u8":
      return (buf.readUInt8(offset) - 128) / 128;
  }
}

/** True when every whole sample of `buf` is below the silence level. */
export function isSilent(buf: Buffer, format: RawFormat): boolean {
  const size = BYTES[format];
  for (let o = 0; o + size <= buf.length; o += size) {
    const v = sampleAt(buf, o, format);
    if (!(Math.abs(v) < SILENCE_LEVEL)) return false;
  }
  return true;
}

/**
 * Leading silence held while the player starts: keeps at most `keepBytes` (whole samples, the
 * newest ones) and reports what it dropped.
 */
export class LeadIn {
  readonly #keepBytes: number;
  #chunks: Buffer[] = [];
  #bytes = 0;
  dropped = 0;

  constructor(format: RawFormat, keepMs = LEAD_KEEP_MS) {
    const size = BYTES[format];
    this.#keepBytes = Math.max(size, Math.floor((RATE * keepMs) / 1000) * size);
  }

  add(chunk: Buffer): void {
    this.#chunks.push(chunk);
    this.#bytes += chunk.length;
    while (this.#bytes > this.#keepBytes) {
      const head = this.#chunks[0];
      if (!head) break;
      const excess = this.#bytes - this.#keepBytes;
      if (head.length <= excess) {
        this.#chunks.shift();
        this.#bytes -= head.length;
        this.dropped += head.length;
      } else {
        this.#chunks[0] = head.subarray(excess);
        this.#bytes -= excess;
        this.dropped += excess;
      }
    }
  }

  /** The kept silence, emptied. */
  take(): Buffer {
    const all = Buffer.concat(this.#chunks);
    this.#chunks = [];
    this.#bytes = 0;
    return all;
  }
}

/**
 * Pipes `source` into `sink` (ending it with the source), dropping leading silence until `opened`
 * settles. Resolves with the bytes dropped once the plain pipe took over.
 */
export function pipeWithLeadIn(source: Readable, sink: Writable, format: RawFormat, opened: Promise<void>): Promise<number> {
  const size = BYTES[format];
  const lead = new LeadIn(format);
  let first = true;
  let carry: Buffer = Buffer.alloc(0);
  let handedOver = false;
  let ended = false;
  let resolveDone: (dropped: number) => void = () => undefined;
  const done = new Promise<number>((resolve) => (resolveDone = resolve));

  const handOver = (): void => {
    if (handedOver) return;
    handedOver = true;
    source.off("data", onData);
    source.off("end", onEnd);
    const kept = Buffer.concat([lead.take(), carry]);
    if (kept.length > 0) sink.write(kept);
    resolveDone(lead.dropped);
    if (ended) {
      sink.end();
      return;
    }
    // From here on the ordinary pipe: back-pressure pauses the source while the sink is full.
    source.pipe(sink);
    source.resume();
  };

  const onData = (chunk: Buffer): void => {
    if (first) {
      // ffmpeg only connects its pulse output once it has decoded something.
      first = false;
      const whole = chunk.length - (chunk.length % size);
      carry = chunk.subarray(whole);
      sink.write(chunk.subarray(0, whole));
      return;
    }
    const data = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
    const whole = data.length - (data.length % size);
    carry = data.subarray(whole);
    const body = data.subarray(0, whole);
    if (isSilent(body, format)) {
      lead.add(body);
      return;
    }
    // Sound before the player is open: keep everything from here (and the silence just before).
    const kept = lead.take();
    carry = Buffer.concat([kept, body, carry]);
    handOver();
  };
  const onEnd = (): void => {
    // The whole body was silence (or tiny): pass what is kept and end the player's input.
    ended = true;
    handOver();
  };

  source.on("data", onData);
  source.once("end", onEnd);
  void opened.then(handOver, handOver);
  return done;
}
