/**
 * The control plane's end of the worker's audio streams (shared/listen/wire.ts, `audio`): one
 * connection per session and format while anyone listens in it, whose raw PCM (written by the
 * worker's tap process straight into the socket) is cut here into 20 ms frames for every
 * listener of that format. The socket is always read at once, so no listener can hold up the
 * tap, the others or the recording; the last listener leaving closes it, which ends the tap.
 */
import type { Socket } from "node:net";
import { PcmFramer } from "../../../shared/listen/framer.ts";
import { formatKey, frameBytes, type ListenFormat } from "../../../shared/listen/protocol.ts";
import type { AudioHello } from "../../../shared/listen/wire.ts";
import { connectWorkerSocket } from "../worker-socket.ts";

export interface TapSubscriber {
  /** The 20 ms frames one chunk of audio completed (often one or two, sometimes none). */
  frames(frames: Buffer[]): void;
  /** The stream ended (the tap stopped, the session is ending, or the worker went away). */
  ended(): void;
}

interface Stream {
  readonly subscribers: Set<TapSubscriber>;
  /** Settles once the worker's socket is connected and the hello sent. */
  ready: Promise<void>;
  socket: Socket | null;
  closed: boolean;
}

export class ListenTaps {
  readonly #streams = new Map<string, Stream>();

  /**
   * Delivers the audio of `format` from the worker at `socketPath` to `subscriber`; resolves to
   * the unsubscribe once the stream is open, rejects when the worker's socket refuses or the
   * stream has already ended.
   */
  async subscribe(socketPath: string, format: ListenFormat, subscriber: TapSubscriber): Promise<() => void> {
    const key = `${socketPath}\0${formatKey(format)}`;
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

  #open(key: string, socketPath: string, format: ListenFormat): Stream {
    const stream: Stream = { subscribers: new Set(), ready: Promise.resolve(), socket: null, closed: false };
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
    socket.on("data", (chunk: Buffer) => {
      const frames = framer.push(chunk);
      if (frames.length > 0) for (const s of stream.subscribers) s.frames(frames);
    });
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
    const subscribers = [...stream.subscribers];
    stream.subscribers.clear();
    for (const s of subscribers) s.ended();
  }
}
