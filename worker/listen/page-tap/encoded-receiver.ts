/**
 * The worker's end of the page tap's encoded path (encoded-script.ts): a WebSocket server on the
 * loopback, at a path nobody else knows, that takes the frames the page copies off its receivers
 * and decodes each source's (Opus with libopus in WebAssembly, G.711 by its tables) into what
 * the mixer takes.
 *
 * A source's frames come as the network gave them to the browser: a lost one, or a few, is stood
 * in for by the frame before it, so the source's timeline stays whole and a tone unbroken; a
 * longer gap (the sender stopped sending during silence, or the network lost more) is not filled:
 * the mix moves on without the source (mixer.ts) and the tap fills silence in real time.
 */
import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { OpusDecoder } from "opus-decoder";
import { WebSocketServer, type WebSocket } from "ws";
import type { Logger } from "../../../shared/log/logger.ts";
import { ENCODED_CODECS, ENCODED_RECORD_HEADER_BYTES } from "./encoded-script.ts";
import { G711_RATE, decodeG711 } from "./g711.ts";

/** A frame this many behind the last is late (dropped); further back is a new stream. */
const MAX_REORDERED_FRAMES = 50;
/** Up to this many lost frames are stood in for; a longer gap is left to the mix's silence. */
const MAX_FILLED_FRAMES = 5;
/** An Opus packet is at most 1275 bytes per frame, up to 6 frames (RFC 6716); a message holds a few. */
const MAX_MESSAGE_BYTES = 64 * 1024;
/** More sources than a page plays at once (mixer.ts MAX_SOURCES). */
const MAX_SOURCES = 32;

export type EncodedAudio = (id: string, rate: number, channels: 1 | 2, data: Float32Array) => void;

/** One codec's decoder for one source: interleaved samples at `rate`, `channels` of them. */
interface FrameDecoder {
  /** The RTP clock of the codec (its timestamps' units per second). */
  readonly clock: number;
  readonly rate: number;
  ready: boolean;
  decode(payload: Uint8Array): Float32Array;
  free(): void;
}

/** Rates libopus decodes to directly (RFC 6716 §2): any listener's rate is one. */
const OPUS_RATES = [8000, 12_000, 16_000, 24_000, 48_000] as const;
type OpusRate = (typeof OPUS_RATES)[number];
const opusRate = (rate: number): OpusRate => OPUS_RATES.find((r) => r >= rate) ?? 48_000;

function opusDecoder(channels: 1 | 2, rate: OpusRate, log: Logger): FrameDecoder {
  const decoder = new OpusDecoder({ channels, sampleRate: rate, preSkip: 0 });
  const d: FrameDecoder = {
    clock: 48_000,
    rate,
    ready: false,
    decode(payload) {
      const { channelData, samplesDecoded: n } = decoder.decodeFrame(payload);
      const [left, right] = channelData;
      if (!left || n === 0) return new Float32Array(0);
      // The decoder's arrays are its own copies, n samples long: kept as they are.
      if (channels === 1 || !right) return left.length === n ? left : left.slice(0, n);
      const out = new Float32Array(n * 2);
      for (let i = 0; i < n; i++) {
        out[i * 2] = left[i]!;
        out[i * 2 + 1] = right[i]!;
      }
      return out;
    },
    free() {
      if (freed) return;
      freed = true;
      d.ready = false;
      // Once started: freeing one that has yet to start throws (its WebAssembly is not there yet).
      decoder.ready.then(() => decoder.free(), () => undefined);
    },
  };
  let freed = false;
  decoder.ready.then(
    () => {
      if (!freed) d.ready = true;
    },
    (err: unknown) => log.warn({ err }, "page tap: the Opus decoder did not start"),
  );
  return d;
}

function g711Decoder(channels: 1 | 2, law: "mu" | "a"): FrameDecoder {
  return {
    clock: G711_RATE,
    rate: G711_RATE,
    ready: true,
    decode(payload) {
      const mono = decodeG711(payload, law);
      if (channels === 1) return mono;
      const out = new Float32Array(mono.length * 2);
      for (let i = 0; i < mono.length; i++) out[i * 2] = out[i * 2 + 1] = mono[i]!;
      return out;
    },
    free: () => undefined,
  };
}

interface Source {
  codec: number;
  decoder: FrameDecoder;
  lastSeq: number;
  lastTs: number;
  /** What the last frame covered, in RTP timestamp units (the codec's clock). */
  lastUnits: number;
  /** The last frame, decoded: what stands in for one lost after it. */
  last: Float32Array | null;
}

export class EncodedReceiver {
  readonly #server: WebSocketServer;
  readonly #path: string;
  readonly #log: Logger;
  readonly #sources = new Map<string, Source>();
  #channels: 1 | 2 = 1;
  #rate: OpusRate = 48_000;
  #onAudio: EncodedAudio = () => undefined;
  #frames = 0;
  #stoodIn = 0;

  private constructor(server: WebSocketServer, path: string, logger: Logger) {
    this.#server = server;
    this.#path = path;
    this.#log = logger;
  }

  /** Listens on an ephemeral loopback port. */
  static async start(logger: Logger): Promise<EncodedReceiver> {
    const path = `/${randomBytes(16).toString("hex")}`;
    const server = new WebSocketServer({
      host: "127.0.0.1",
      port: 0,
      maxPayload: MAX_MESSAGE_BYTES,
      perMessageDeflate: false,
      verifyClient: (info: { req: { url?: string } }) => info.req.url === path,
    });
    await new Promise<void>((resolve, reject) => {
      server.once("listening", resolve);
      server.once("error", reject);
    });
    const receiver = new EncodedReceiver(server, path, logger);
    server.on("connection", (ws) => receiver.#accept(ws));
    return receiver;
  }

  /** The URL the page sends to (the path is its only credential). */
  get url(): string {
    return `ws://127.0.0.1:${(this.#server.address() as AddressInfo).port}${this.#path}`;
  }

  /** Frames decoded so far (tests and logs: the encoded path served). */
  get frames(): number {
    return this.#frames;
  }

  /** Frames stood in for by the one before (lost on the way): none on a loopback call. */
  get stoodIn(): number {
    return this.#stoodIn;
  }

  /**
   * Where decoded audio goes, in how many channels and at what rate (Opus is decoded straight to
   * it: the highest rate listened to, so that no listener of that rate needs a resampler); a
   * change makes the decoders anew.
   */
  serve(channels: 1 | 2, rate: number, onAudio: EncodedAudio): void {
    const decodeRate = opusRate(rate);
    if (channels !== this.#channels || decodeRate !== this.#rate) this.#forgetAll();
    this.#channels = channels;
    this.#rate = decodeRate;
    this.#onAudio = onAudio;
  }

  /** The page ended source `id`. */
  end(id: string): void {
    this.#sources.get(id)?.decoder.free();
    this.#sources.delete(id);
  }

  async close(): Promise<void> {
    for (const ws of this.#server.clients) ws.terminate();
    this.#forgetAll();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #forgetAll(): void {
    for (const s of this.#sources.values()) s.decoder.free();
    this.#sources.clear();
  }

  #accept(ws: WebSocket): void {
    this.#log.debug("page tap: the encoded path connected");
    ws.on("message", (data, isBinary) => {
      if (!isBinary || !Buffer.isBuffer(data)) return;
      try {
        this.#onMessage(data);
      } catch (err) {
        // Whatever a message holds, it must not take the worker down: the message is dropped.
        this.#log.warn({ err }, "page tap: an encoded message could not be decoded");
      }
    });
    ws.on("error", () => ws.terminate());
  }

  #onMessage(msg: Buffer): void {
    for (let at = 0; at + ENCODED_RECORD_HEADER_BYTES <= msg.length; ) {
      const length = msg.readUInt16LE(at);
      if (length < ENCODED_RECORD_HEADER_BYTES || at + length > msg.length) return;
      // A frame without payload (a sender's padding: a Chromium sender's come every 5 s) is no
      // audio: skipped, as the page skips it, while the frames after it in the message are heard.
      if (length > ENCODED_RECORD_HEADER_BYTES) this.#onFrame(String(msg.readUInt32LE(at + 2)), msg.readUInt32LE(at + 6), msg.readUInt16LE(at + 10), msg[at + 12]!, msg.subarray(at + ENCODED_RECORD_HEADER_BYTES, at + length));
      at += length;
    }
  }

  #source(id: string, codec: number): Source | null {
    const known = this.#sources.get(id);
    if (known?.codec === codec) return known;
    const decoder = this.#decoder(codec);
    if (!decoder || (!known && this.#sources.size >= MAX_SOURCES)) return null;
    known?.decoder.free();
    const made: Source = { codec, decoder, lastSeq: -1, lastTs: 0, lastUnits: 0, last: null };
    this.#sources.set(id, made);
    return made;
  }

  #decoder(codec: number): FrameDecoder | null {
    if (codec === ENCODED_CODECS["audio/opus"]) return opusDecoder(this.#channels, this.#rate, this.#log);
    if (codec === ENCODED_CODECS["audio/pcmu"]) return g711Decoder(this.#channels, "mu");
    if (codec === ENCODED_CODECS["audio/pcma"]) return g711Decoder(this.#channels, "a");
    return null;
  }

  #onFrame(id: string, ts: number, seq: number, codec: number, payload: Buffer): void {
    const s = this.#source(id, codec);
    // Frames before the decoder is ready (its first few ms) are dropped, as late ones are.
    if (!s?.decoder.ready) return;
    const { decoder } = s;
    const step = (seq - s.lastSeq) & 0xffff;
    // A repeat or a late frame is dropped; a jump back further than any reordering is a new
    // stream (the page's next document numbers its sources from 1 again).
    if (s.lastSeq >= 0 && (step === 0 || (step >= 0x8000 && 0x10000 - step <= MAX_REORDERED_FRAMES))) return void this.#log.debug({ id, seq, last: s.lastSeq }, "encoded path: late frame");
    // Audio lost on the way (the timestamps say how much; sequence numbers also count packets
    // that carry none, such as the sender's padding) is stood in for by the frame before it, as
    // the browser conceals a lost frame rather than play a hole; a longer gap is left to the mix.
    if (s.lastSeq >= 0 && step < 0x8000 && s.last && s.lastUnits > 0) {
      const lost = Math.round((((ts - s.lastTs) >>> 0) - s.lastUnits) / s.lastUnits);
      if (lost >= 1 && lost <= MAX_FILLED_FRAMES) {
        this.#stoodIn += lost;
        for (let i = 0; i < lost; i++) this.#onAudio(id, decoder.rate, this.#channels, s.last);
      }
    }
    s.lastSeq = seq;
    s.lastTs = ts;
    const data = decoder.decode(payload);
    if (data.length === 0) return;
    s.last = data;
    s.lastUnits = ((data.length / this.#channels) * decoder.clock) / decoder.rate;
    this.#frames++;
    this.#onAudio(id, decoder.rate, this.#channels, data);
  }
}
