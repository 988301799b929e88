/**
 * The worker's end of live listening: a unix socket in the session's private work dir (like the
 * ingest socket). The control plane connects and writes one `hello` line (shared/listen/wire.ts):
 * `audio` connections (one per format listened to) get a tap writing raw PCM into them
 * (taps.ts); `events` connections (one per WebSocket listener) get events and a last `end` frame
 * when the session is over. Tokens never reach the worker: the control plane checked them before
 * it connected.
 */
import type { Socket } from "node:net";
import { join } from "node:path";
import type { Logger } from "../../shared/log/logger.ts";
import type { ListenEvent } from "../../shared/listen/events.ts";
import { FRAME_KIND, MAX_WORKER_BACKLOG_BYTES, encodeFrame, helloSchema, type EventsHello, type Hello } from "../../shared/listen/wire.ts";
import { openUnixServer } from "../sockets/unix-server.ts";
import type { AudioTaps } from "./taps.ts";

/** The hello is one short JSON line; anything longer is not our control plane. */
const MAX_HELLO_BYTES = 1024;
/** How long the last `end` frames get to reach the control plane before the sockets are destroyed. */
const CLOSE_GRACE_MS = 1_000;

export interface EndNotice {
  code: number;
  reason: string;
}

export interface ListenServer {
  readonly path: string;
  /** Connections now open (listeners the control plane bridged). */
  readonly connections: number;
  /** Sends an event to every listener that asked for events. */
  publish(event: ListenEvent): void;
  /** Sends `end` to every listener and closes their sockets; new connections get `end` at once. */
  end(notice: EndNotice): void;
  close(): Promise<void>;
}

export interface ListenServerOptions {
  workDir: string;
  taps: AudioTaps;
  logger: Logger;
  /** The session's status now: sent to a new listener first, so it knows where the session is. */
  currentEvents: () => ListenEvent[];
}

interface Connection {
  socket: Socket;
  hello: EventsHello;
}

export function listenSocketPath(workDir: string): string {
  return join(workDir, "listen.sock");
}

export async function openListenServer(options: ListenServerOptions): Promise<ListenServer> {
  const { taps, logger } = options;
  const connections = new Set<Connection>();
  let ended: EndNotice | null = null;

  const sendEnd = (socket: Socket, notice: EndNotice) => {
    socket.end(encodeFrame(FRAME_KIND.end, Buffer.from(JSON.stringify(notice))));
  };

  const write = (conn: Connection, frame: Buffer) => {
    if (conn.socket.destroyed) return;
    if (conn.socket.writableLength > MAX_WORKER_BACKLOG_BYTES) {
      logger.warn({ backlog_bytes: conn.socket.writableLength }, "listen: the control plane stopped reading; dropping the connection");
      conn.socket.destroy();
      return;
    }
    conn.socket.write(frame);
  };

  const attach = (socket: Socket, hello: Hello) => {
    if (hello.stream === "audio") {
      // After the end a new tap would only race PulseAudio's shutdown: the reader gets EOF.
      if (ended) return void socket.destroy();
      return taps.open({ sampleRate: hello.sample_rate, channels: hello.channels }, socket);
    }
    if (ended) return sendEnd(socket, ended);
    const conn: Connection = { socket, hello };
    connections.add(conn);
    if (hello.events) for (const e of options.currentEvents()) write(conn, encodeFrame(FRAME_KIND.event, Buffer.from(JSON.stringify(e))));
    socket.once("close", () => {
      connections.delete(conn);
      logger.debug({ listeners: connections.size }, "listener detached");
    });
    logger.info({ events: hello.events, listeners: connections.size }, "listener attached");
  };

  const server = await openUnixServer(listenSocketPath(options.workDir), (socket) => {
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const nl = head.indexOf(0x0a);
      if (nl < 0) {
        if (head.length > MAX_HELLO_BYTES) socket.destroy();
        return;
      }
      socket.off("data", onData);
      // An audio connection's socket goes to parec as it is: nothing may be read from it here.
      socket.pause();
      let parsed: Hello | null = null;
      try {
        const result = helloSchema.safeParse(JSON.parse(head.subarray(0, nl).toString("utf8")));
        if (result.success) parsed = result.data;
      } catch {
        parsed = null;
      }
      if (!parsed || nl !== head.length - 1) return socket.destroy();
      // Nothing more comes from the control plane on an events connection: its end only closes.
      if (parsed.stream === "events") socket.resume();
      attach(socket, parsed);
    };
    socket.on("data", onData);
  });

  return {
    path: server.path,
    get connections() {
      return connections.size;
    },
    publish(event) {
      const frame = encodeFrame(FRAME_KIND.event, Buffer.from(JSON.stringify(event)));
      for (const c of connections) if (c.hello.events) write(c, frame);
    },
    end(notice) {
      ended ??= notice;
      for (const c of connections) sendEnd(c.socket, ended);
    },
    // Sockets that got `end` close once the control plane read it; a stuck one is destroyed.
    close: () => server.close({ graceMs: CLOSE_GRACE_MS }),
  };
}
