/**
 * The control plane's end of the worker's audio streams (shared/listen/wire.ts, `audio`): one
 * connection per session and format while anyone listens in it, whose raw PCM (written by the
 * worker's tap process straight into the socket) is cut here into 20 ms frames for every
 * listener of that format, a burst spread over time (spreader.ts). The socket is always read at
 * once, so no listener can hold up the tap, the others or the recording; the last listener
 * leaving closes it, which ends the tap.
 */
import type { Socket } from "node:net";
import { PcmFramer } from "../../../shared/listen/framer.ts";
import { formatKey, frameBytes, type ListenFormat } from "../../../shared/listen/protocol.ts";
import type { AudioHello } from "../../../shared/listen/wire.ts";
import { connectWorkerSocket } from "../worker-socket.ts";
import { FrameSpreader } from "./spreader.ts";

export interface TapSubscriber {
  /** The next 20 ms frames of the stream (one to a few at a time, never none). */
  frames(frames: Buffer[]): void;
  /** The stream ended (the tap stopped, the session is ending, or the worker went away). */
  ended(): void;
}

interface Stream {
  readonly subscribers: Set<TapSubscriber>;
  /** Settles once the worker's socket is connected and the hello sent. */
  ready: Promise<void>;
  socket: Socket | null;
  readonly spreader: FrameSpreader;
  closed: boolean;
}

const streamKey = (socketPath: string, format: ListenFormat): string => `${socketPath}\0${formatKey(format)}`;

export class ListenTaps {
  readonly #streams = new Map<string, Stream>();

  /**
   * Delivers the audio of `format` from the worker at `socketPath` to `subscriber`; resolves to
   * the unsubscribe once the stream is open, rejects when the worker's socket refuses or the
   * stream has already ended.
   */
  async subscribe(socketPath: string, format: ListenFormat, subscriber: TapSubscriber): Promise<() => void> {
    const key = streamKey(socketPath, format);
    const stream = this.#streams.get(key) ?? this.#open(key, socketPath, format);
    stream.subscribers.add(subscriber);
    try {
      await stream.ready;
      if (stream.closed) throw new Error("the audio stream ended");
    } catch (err) {
      stream.subscribers.delete(subscriber);
      throw err;
    }
    return () => {
      stream.subscribers.delete(subscriber);
      if (stream.subscribers.size === 0) this.#end(key, stream);
    };
  }

  /**
   * Sends on at once what the stream of `format` holds back (the session ended: its last audio
   * goes before the close frame, not after it, lost).
   */
  flush(socketPath: string, format: ListenFormat): void {
    this.#streams.get(streamKey(socketPath, format))?.spreader.flush();
  }

  #open(key: string, socketPath: string, format: ListenFormat): Stream {
    const subscribers = new Set<TapSubscriber>();
    const spreader = new FrameSpreader((frames) => {
      for (const s of subscribers) s.frames(frames);
    });
    const stream: Stream = { subscribers, ready: Promise.resolve(), socket: null, spreader, closed: false };
    this.#streams.set(key, stream);
    stream.ready = connectWorkerSocket(socketPath).then(
      (socket) => this.#attach(key, stream, format, socket),
      (err: unknown) => {
        // Every subscriber waiting learns it from its own subscribe(): nobody is told twice.
        stream.subscribers.clear();
        this.#end(key, stream);
        throw err;
      },
    );
    return stream;
  }

  #attach(key: string, stream: Stream, format: ListenFormat, socket: Socket): void {
    stream.socket = socket;
    if (stream.closed) return void socket.destroy();
    const framer = new PcmFramer(frameBytes(format));
    socket.on("data", (chunk: Buffer) => stream.spreader.push(framer.push(chunk)));
    socket.on("error", () => socket.destroy());
    socket.once("close", () => this.#end(key, stream));
    const hello: AudioHello = { stream: "audio", sample_rate: format.sampleRate, channels: format.channels };
    socket.write(`${JSON.stringify(hello)}\n`);
  }

  /** Closes the stream and tells its subscribers. */
  #end(key: string, stream: Stream): void {
    if (stream.closed) return;
    stream.closed = true;
    if (this.#streams.get(key) === stream) this.#streams.delete(key);
    stream.socket?.destroy();
    // The stream's last audio reaches whoever still listens before they hear it ended.
    stream.spreader.flush();
    const subscribers = [...stream.subscribers];
    stream.subscribers.clear();
    for (const s of subscribers) s.ended();
  }
}
