import {
  fromWorkerSchema,
  toWorkerSchema,
  type FromWorker,
  type InitMessage,
  type ToWorker,
  type WarmMessage,
  type WorkerRequest,
  type WorkerResponse,
} from "../../shared/ipc/messages.ts";
import { launchGo } from "./launch-turn.ts";

/** What the session needs from the IPC channel once `init` has arrived. */
export interface Channel {
  /** Sends a message to the supervisor; false when the channel is gone (nobody to tell). */
  send(message: FromWorker): Promise<boolean>;
  /** Registers what a `stop` does; a stop that came before the session listened is replayed. */
  onStop(handler: (reason: "stopped_by_api" | "shutdown") => void): void;
  /** Registers what an IPC disconnect (the supervisor died or closed the channel) does. */
  onDisconnect(handler: () => void): void;
  /** Registers the answer to a `request` (audio playback later; 409 until then). */
  onRequest(handler: (request: WorkerRequest) => Promise<Omit<WorkerResponse, "type" | "id">>): void;
}

export type InitResult = { ok: true; init: InitMessage; channel: Channel } | { ok: false; message: string };

/** A warm worker's hooks (worker/session/warm.ts): `warm` came first; it ended before `init`. */
export interface WarmHooks {
  onWarm(message: WarmMessage, send: Channel["send"]): void;
  /** A `stop` or a disconnect before `init`: close what `onWarm` started and exit. */
  onWarmEnd(): void;
}

/** Without init the worker has nothing to do; the supervisor sends it right after fork. */
const INIT_TIMEOUT_MS = 30_000;

/**
 * Attaches to the fork's IPC channel and waits for `init`. Every message is parsed by zod on
 * arrival (conventions.md 9). `ping` is answered at once, before and after init, straight from the
 * message handler: the supervisor judges a hung worker by it, so it must not wait on the session.
 */
export function attachChannel(warm?: WarmHooks): Promise<InitResult> {
  if (!process.send) {
    return Promise.resolve({ ok: false, message: "worker/main.ts must be started with child_process.fork (no IPC channel)" });
  }
  let stopHandler: ((reason: "stopped_by_api" | "shutdown") => void) | undefined;
  let pendingStop: "stopped_by_api" | "shutdown" | undefined;
  let disconnectHandler: (() => void) | undefined;
  let disconnected = false;
  let requestHandler: ((request: WorkerRequest) => Promise<Omit<WorkerResponse, "type" | "id">>) | undefined;
  let initialised = false;
  let warming = false;

  const send = (message: FromWorker): Promise<boolean> => {
    // Parsing our own output keeps a malformed message from reaching the supervisor as "valid".
    const parsed = fromWorkerSchema.parse(message);
    if (!process.connected || !process.send) return Promise.resolve(false);
    return new Promise((resolve) => {
      try {
        process.send?.(parsed, undefined, {}, (err) => resolve(err === null || err === undefined));
      } catch {
        resolve(false);
      }
    });
  };

  const channel: Channel = {
    send,
    onStop: (handler) => {
      stopHandler = handler;
      if (pendingStop) handler(pendingStop);
    },
    onDisconnect: (handler) => {
      disconnectHandler = handler;
      if (disconnected) handler();
    },
    onRequest: (handler) => {
      requestHandler = handler;
    },
  };

  return new Promise<InitResult>((resolve) => {
    const timer = setTimeout(() => {
      resolve({ ok: false, message: `no init message within ${INIT_TIMEOUT_MS / 1000} s` });
    }, INIT_TIMEOUT_MS);

    process.on("disconnect", () => {
      disconnected = true;
      clearTimeout(timer);
      if (!initialised && warming) warm?.onWarmEnd();
      if (!initialised) resolve({ ok: false, message: "the supervisor closed the IPC channel before init" });
      disconnectHandler?.();
    });

    process.on("message", (raw: unknown) => {
      const parsed = toWorkerSchema.safeParse(raw);
      if (!parsed.success) {
        if (!initialised) {
          clearTimeout(timer);
          resolve({ ok: false, message: `invalid init message: ${parsed.error.message}` });
        }
        // After init an unparseable message is dropped: one bad message must not end a meeting.
        return;
      }
      const message: ToWorker = parsed.data;
      if (message.type === "ping") {
        void send({ type: "pong", id: message.id });
        return;
      }
      // A warm worker's turn comes before init, a cold one's after it.
      if (message.type === "launchGo") {
        launchGo();
        return;
      }
      if (!initialised && warm && !warming && message.type === "warm") {
        // A warm worker waits for its meeting as long as the pool keeps it: no init deadline.
        clearTimeout(timer);
        warming = true;
        warm.onWarm(message, send);
        return;
      }
      if (!initialised && warming && message.type === "stop") {
        warm?.onWarmEnd();
        return;
      }
      if (!initialised) {
        clearTimeout(timer);
        if (message.type !== "init") {
          resolve({ ok: false, message: `expected init as the first message, got ${message.type}` });
          return;
        }
        initialised = true;
        resolve({ ok: true, init: message, channel });
        return;
      }
      switch (message.type) {
        case "init":
        case "warm":
          return; // A second init is ignored: one worker, one meeting.
        case "stop":
          pendingStop ??= message.reason;
          stopHandler?.(message.reason);
          return;
        case "request":
          void answer(message);
          return;
      }
    });

    const answer = async (request: WorkerRequest): Promise<void> => {
      let result: Omit<WorkerResponse, "type" | "id">;
      try {
        result = requestHandler
          ? await requestHandler(request)
          : notReady(request);
      } catch (err) {
        result = { ok: false, error: { status: 500, message: (err as Error).message } };
      }
      await send({ type: "response", id: request.id, ...result });
    };
  });
}

/** The answer to a request that comes before the page is open (the session is still starting). */
export function notReady(request: WorkerRequest): Omit<WorkerResponse, "type" | "id"> {
  const message =
    request.op === "evidence.capture"
      ? "The bot's browser is still starting: there is no page to capture yet; try again in a moment."
      : "The session is still starting; try again once the bot is in the call.";
  return { ok: false, error: { status: 409, message } };
}
