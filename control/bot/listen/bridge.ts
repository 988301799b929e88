/**
 * One listener's WebSocket fed from the worker: the audio of its format (taps.ts, shared by the
 * listeners of that format) and its own events connection (`hello`, then events and `end`), both
 * through the Pacer (back-pressure) to the consumer. Both are always read at once, so a slow
 * consumer never holds up the worker, the other listeners or the recording. Ends: the worker's
 * `end` frame (session over: queued audio, then the close frame), the consumer closing, a
 * revoke, or the Pacer's cut-off (1008).
 */
import type { Socket } from "node:net";
import type { WebSocket } from "ws";
import type { SessionStatus } from "../../../shared/ipc/messages.ts";
import type { Logger } from "../../../shared/log/logger.ts";
import { CLOSE, CLOSE_REASON, FRAME_MS } from "../../../shared/listen/protocol.ts";
import { FRAME_KIND, FrameDecoder, type EventsHello } from "../../../shared/listen/wire.ts";
import { PING_MS, Pacer } from "./pacer.ts";
import type { Listener, ListenerConnection } from "./registry.ts";
import type { ListenTaps } from "./taps.ts";

/** A consumer that does not answer the close handshake (it stopped reading) is dropped after this. */
const CLOSE_TIMEOUT_MS = 3_000;
/**
 * ... except one cut off for not reading, kept this long: dropping its socket sooner resets the
 * connection (the kernel still holds frames it has not read), and a consumer that reads again
 * would see 1006 instead of its `overrun` and 1008. ws's own limit is 30 s.
 */
const CUT_OFF_CLOSE_TIMEOUT_MS = 25_000;
/** How long a worker stream that ended without `end` waits for the supervisor to see the exit. */
const WORKER_EXIT_WAIT_MS = 3_000;

export interface BridgeOptions {
  ws: WebSocket;
  /** The upgraded TCP socket under `ws`: corked while one worker chunk's frames are sent. */
  socket: { cork(): void; uncork(): void };
  /** The listener's events connection to the worker (connected, hello not yet sent). */
  events: Socket;
  taps: ListenTaps;
  listener: Listener;
  logger: Logger;
  /**
   * Null while the session runs; once it is over, the status it ends with (a worker socket that
   * closes without `end` then means that final status and 1000).
   */
  sessionEnd: () => { status: SessionStatus | null } | null;
  /** Called once the WebSocket closed (the listener may connect again). */
  onClosed?: () => void;
}

export function bridgeListener(options: BridgeOptions): void {
  const { ws, events, listener, logger } = options;
  const log = logger.child({ session_id: listener.sessionId, listener_id: listener.id });
  let closing = false;
  let lost = false;
  let unsubscribe: () => void = () => undefined;

  // The last status this consumer was sent, so a session's end tells it once (finalStatus below).
  let lastStatus: string | null = null;
  const close = (code: number, reason: string, finalStatus?: SessionStatus | null) => {
    if (closing) return;
    closing = true;
    if (finalStatus && listener.events && finalStatus !== lastStatus) {
      // The worker died before it could say so (killed, crashed): the end's status comes from here.
      pacer.flush();
      ws.send(JSON.stringify({ type: "status", status: finalStatus }));
    }
    pacer.stop();
    events.destroy();
    unsubscribe();
    ws.close(code, reason);
    // A consumer that stopped reading never answers: its socket (and what it holds) goes anyway.
    setTimeout(() => ws.terminate(), code === CLOSE.tooSlow ? CUT_OFF_CLOSE_TIMEOUT_MS : CLOSE_TIMEOUT_MS).unref();
  };

  const pacer = new Pacer({
    send: (data) => {
      if (typeof data === "string") lastStatus = statusOf(data) ?? lastStatus;
      ws.send(data, { binary: typeof data !== "string" });
    },
    ping: (payload) => ws.ping(payload),
    cutOff: (behindMs) => {
      log.warn({ behind_ms: behindMs, dropped_ms: pacer.droppedMs }, "listener fell behind; cut off");
      close(CLOSE.tooSlow, CLOSE_REASON.tooSlow);
    },
  });
  // A ping every PING_MS of the worker's audio, in the same TCP write as that audio (a timer of
  // its own would wake this process and write to the socket five times a second more).
  let framesSincePing = 0;
  ws.on("pong", (data: Buffer) => pacer.pong(data));

  // The frames of one worker chunk (audio or events) leave in one TCP write instead of one each.
  const corked = (send: () => void) => {
    options.socket.cork();
    process.nextTick(() => options.socket.uncork());
    send();
  };

  const decoder = new FrameDecoder();
  events.on("data", (chunk: Buffer) => {
    let frames;
    try {
      frames = decoder.push(chunk);
    } catch (err) {
      log.error({ err }, "listen: the worker's stream is broken");
      return close(CLOSE.internal, CLOSE_REASON.tapFailed);
    }
    corked(() => {
      for (const frame of frames) {
        if (frame.kind === FRAME_KIND.event) pacer.text(frame.payload.toString("utf8"));
        else {
          const notice = parseEnd(frame.payload);
          options.taps.flush(listener.socketPath, listener.format);
          pacer.flush();
          return close(notice.code, notice.reason);
        }
      }
    });
  });
  events.on("error", () => events.destroy());

  // A worker stream ending without `end`: a worker that died (the session ends as interrupted)
  // closes its sockets before the supervisor has seen its exit, and a session ending stops the
  // audio just before it sends `end`. Wait for that verdict a moment, so such a listener also
  // gets 1000 "session ended"; only a session that goes on means a failed tap.
  const streamLost = () => {
    if (closing || lost) return;
    lost = true;
    const deadline = Date.now() + WORKER_EXIT_WAIT_MS;
    const decide = () => {
      if (closing) return;
      const end = options.sessionEnd();
      if (end) return close(CLOSE.normal, CLOSE_REASON.sessionEnded, end.status);
      if (Date.now() < deadline) return void setTimeout(decide, 100);
      close(CLOSE.internal, CLOSE_REASON.tapFailed);
    };
    decide();
  };
  events.once("close", streamLost);

  options.taps
    .subscribe(listener.socketPath, listener.format, {
      frames: (frames) => corked(() => {
        for (const frame of frames) pacer.audio(frame);
        framesSincePing += frames.length;
        if (framesSincePing * FRAME_MS < PING_MS) return;
        framesSincePing = 0;
        pacer.tick();
      }),
      ended: streamLost,
    })
    .then(
      (stop) => {
        if (closing) stop();
        else unsubscribe = stop;
      },
      streamLost,
    );

  ws.on("error", () => ws.terminate());
  ws.once("close", (code: number) => {
    closing = true;
    pacer.stop();
    events.destroy();
    unsubscribe();
    if (listener.connection === connection) listener.connection = null;
    log.info({ code, dropped_ms: pacer.droppedMs }, "listener disconnected");
    options.onClosed?.();
  });

  const connection: ListenerConnection = { close };
  listener.connection = connection;
  const hello: EventsHello = { stream: "events", events: listener.events };
  events.write(`${JSON.stringify(hello)}\n`);
  log.info({ sample_rate: listener.format.sampleRate, channels: listener.format.channels, events: hello.events }, "listener connected");
}

function parseEnd(payload: Buffer): { code: number; reason: string } {
  try {
    const v = JSON.parse(payload.toString("utf8")) as { code?: unknown; reason?: unknown };
    if (typeof v.code === "number" && typeof v.reason === "string") return { code: v.code, reason: v.reason };
  } catch {
    // fall through to the default
  }
  return { code: CLOSE.normal, reason: CLOSE_REASON.sessionEnded };
}

/** The status a text frame announces; null for any other event (a few a second: parsing is cheap). */
function statusOf(json: string): string | null {
  try {
    const v = JSON.parse(json) as { type?: unknown; status?: unknown };
    return v.type === "status" && typeof v.status === "string" ? v.status : null;
  } catch {
    return null;
  }
}
