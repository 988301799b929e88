/**
 * The worker's end of live listening: a unix socket in the session's private work dir (like the
 * ingest socket). The control plane connects once per WebSocket listener, writes one `hello`
 * line naming the format, and reads that listener's frames (shared/listen/wire.ts): 20 ms of
 * PCM, events, and a last `end` frame when the session is over. Tokens never reach the worker:
 * the control plane checked them before it connected.
 */
import type { Socket } from "node:net";
import { join } from "node:path";
import type { Logger } from "../../shared/log/logger.ts";
import type { ListenEvent } from "../../shared/listen/events.ts";
import { audioMs, type ListenFormat } from "../../shared/listen/protocol.ts";
import { FRAME_KIND, encodeFrame, helloSchema, type Hello } from "../../shared/listen/wire.ts";
import { openUnixServer } from "../sockets/unix-server.ts";
import type { AudioFanout } from "./fanout.ts";

/** The hello is one short JSON line; anything longer is not our control plane. */
const MAX_HELLO_BYTES = 1024;
/**
 * The control plane reads its end of the socket at once, always (slow WebSocket consumers are
 * handled there); audio piling up here means it is stuck. Past two seconds the connection goes,
 * so the worker's memory stays bounded whatever happens on the other side.
 */
const MAX_BACKLOG_MS = 2_000;
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
  fanout: AudioFanout;
  logger: Logger;
  /** The session's status now: sent to a new listener first, so it knows where the session is. */
  currentEvents: () => ListenEvent[];
}

interface Connection {
  socket: Socket;
  hello: Hello;
  unsubscribe: () => void;
}

export function listenSocketPath(workDir: string): string {
  return join(workDir, "listen.sock");
}

export async function openListenServer(options: ListenServerOptions): Promise<ListenServer> {
  const { fanout, logger } = options;
  const connections = new Set<Connection>();
  let ended: EndNotice | null = null;

  const sendEnd = (socket: Socket, notice: EndNotice) => {
    socket.end(encodeFrame(FRAME_KIND.end, Buffer.from(JSON.stringify(notice))));
  };

  const attach = (socket: Socket, hello: Hello) => {
    if (ended) return sendEnd(socket, ended);
    const format: ListenFormat = { sampleRate: hello.sample_rate, channels: hello.channels };
    const conn: Connection = { socket, hello, unsubscribe: () => undefined };
    connections.add(conn);
    if (hello.events) for (const e of options.currentEvents()) socket.write(encodeFrame(FRAME_KIND.event, Buffer.from(JSON.stringify(e))));
    conn.unsubscribe = fanout.subscribe(format, (frames) => {
      if (socket.destroyed) return;
      if (audioMs(format, socket.writableLength) > MAX_BACKLOG_MS) {
        logger.warn({ backlog_bytes: socket.writableLength }, "listen: the control plane stopped reading; dropping the connection");
        socket.destroy();
        return;
      }
      // One write per delivery: a syscall (and a wake-up of the control plane) per chunk, not per frame.
      socket.write(frames.length === 1 ? encodeFrame(FRAME_KIND.audio, frames[0] as Buffer) : Buffer.concat(frames.map((f) => encodeFrame(FRAME_KIND.audio, f))));
    });
    socket.once("close", () => {
      connections.delete(conn);
      conn.unsubscribe();
      logger.debug({ listeners: connections.size }, "listener detached");
    });
    logger.info({ sample_rate: hello.sample_rate, channels: hello.channels, events: hello.events, listeners: connections.size }, "listener attached");
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
      let parsed: Hello | null = null;
      try {
        const result = helloSchema.safeParse(JSON.parse(head.subarray(0, nl).toString("utf8")));
        if (result.success) parsed = result.data;
      } catch {
        parsed = null;
      }
      if (!parsed) return socket.destroy();
      // Nothing more is read from the control plane: its end only closes.
      socket.resume();
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
      for (const c of connections) if (c.hello.events && !c.socket.destroyed) c.socket.write(frame);
    },
    end(notice) {
      ended ??= notice;
      for (const c of connections) {
        c.unsubscribe();
        sendEnd(c.socket, ended);
      }
    },
    // Sockets that got `end` close once the control plane read it; a stuck one is destroyed.
    close: () => server.close({ graceMs: CLOSE_GRACE_MS }),
  };
}
