/**
 * The worker's microphone: answers the audio `request` ops (worker/playback/ops.ts). One sound at
 * a time — a new play or a new ingest replaces what is playing — and at most one open stream.
 * Ops run one after another, so a stop can never overtake the play it follows.
 */
import { rm } from "node:fs/promises";
import type { Socket } from "node:net";
import type { Page } from "playwright-core";
import type { WorkerRequest, WorkerResponse } from "../../shared/ipc/messages.ts";
import type { Logger } from "../../shared/log/logger.ts";
import { setMicMuted } from "../teams/index.ts";
import { openIngestSocket, type IngestSocket } from "./ingest-socket.ts";
import { JitterBuffer } from "./jitter-buffer.ts";
import { opArgsSchemas, type PlayArgs, type RawFormat, type StreamOpenArgs } from "./ops.ts";
import { PlayerFailure, startPlayer, type Player } from "./player.ts";
import { SparePlayer, startStreamPlayer } from "./stream-player.ts";

export type Answer = Omit<WorkerResponse, "type" | "id">;

export interface PlaybackDeps {
  pulseEnv: Record<string, string>;
  page: Page;
  workDir: string;
  logger: Logger;
  /** True while the bot is in the call (status recording or connected). */
  inCall: () => boolean;
}

export interface Playback {
  handle(request: WorkerRequest): Promise<Answer>;
  /** Stops every ffmpeg and closes the ingest socket; idempotent. Called when the session ends. */
  close(): Promise<void>;
}

const refuse = (status: number, message: string): Answer => ({ ok: false, error: { status, message } });

interface Current {
  player: Player;
  /** Runs once the player ended, whichever way (deletes an upload). */
  cleanup: () => Promise<void>;
}

export function createPlayback(deps: PlaybackDeps): Playback {
  const { pulseEnv, page, workDir, logger } = deps;
  const log = logger.child({ component: "playback" });
  let current: Current | null = null;
  let stream: { socket: IngestSocket; format: RawFormat | null; spare: SparePlayer } | null = null;
  let closed = false;
  let queue: Promise<unknown> = Promise.resolve();

  const stopCurrent = async (): Promise<void> => {
    const c = current;
    current = null;
    if (!c) return;
    await c.player.stop();
    await c.cleanup();
  };

  const track = (player: Player, cleanup: () => Promise<void>): void => {
    const entry: Current = { player, cleanup };
    current = entry;
    void player.ended.then(async ({ exit, stopped }) => {
      if (!stopped) log.info({ pid: player.pid, code: exit.code }, "playback ended");
      if (current === entry) {
        current = null;
        await cleanup();
      }
    });
  };

  /** Rule 2: unmute first unless `unmute` is false; false keeps the bot muted (staged audio). */
  const setMic = async (unmute: boolean): Promise<boolean> => {
    const result = await setMicMuted(page, !unmute, log);
    if (!result.ok) log.warn({ unmute }, "could not confirm the microphone state; playing anyway");
    return unmute && result.ok;
  };

  const play = async (args: PlayArgs): Promise<Answer> => {
    const removeUpload = async () => {
      if (args.deleteAfter) await rm(args.path, { force: true }).catch((err: unknown) => log.warn({ err }, "could not delete the upload"));
    };
    const unmuted = await setMic(args.unmute);
    await stopCurrent();
    const player = startPlayer({ source: { kind: "file", path: args.path, loop: args.loop }, volume: args.volume, pulseEnv, logger: log });
    track(player, removeUpload);
    try {
      await player.opened;
    } catch (err) {
      if (err instanceof PlayerFailure) {
        log.warn({ err }, "file could not be played");
        return refuse(400, "The file could not be decoded as audio.");
      }
      throw err;
    }
    log.info({ pid: player.pid, loop: args.loop, volume: args.volume, unmuted, upload: args.deleteAfter }, "playback started");
    return { ok: true, result: { status: "playing", unmuted } };
  };

  const onIngest = (socket: Socket, format: RawFormat | null): void => {
    // Serialised with the ops: an ingest replaces what plays, like a play does.
    queue = queue.then(async () => {
      const open = stream;
      if (closed || socket.destroyed || !open) return socket.destroy();
      await stopCurrent();
      const player = open.spare.take();
      const input = player.input;
      if (!input) return socket.destroy();
      // Raw PCM is paced against the wall clock (jitter-buffer.ts); a container goes straight in,
      // and pipe() pauses the socket while ffmpeg's stdin is full: the back-pressure of Rule 3.
      const jitter = format ? new JitterBuffer(input, { format, opened: player.opened }) : null;
      track(player, async () => {
        socket.destroy();
        jitter?.destroy();
        if (jitter) log.debug({ pid: player.pid, written: jitter.written, dropped: jitter.dropped }, "ingest paced");
        // The next ingest of this stream gets a started player again.
        if (stream === open && !closed) open.spare.arm();
      });
      input.on("error", () => socket.destroy());
      socket.pipe(jitter ?? input);
      log.info({ pid: player.pid, format }, "ingest started");
    }).catch((err: unknown) => {
      log.error({ err }, "ingest failed");
      socket.destroy();
    });
  };

  const openStream = async (args: StreamOpenArgs): Promise<Answer> => {
    if (stream) return refuse(409, "A stream is already open for this session.");
    // ffmpeg starts while the microphone is switched on: neither waits for the other.
    const spare = new SparePlayer(() => startStreamPlayer(args.format, pulseEnv, log));
    spare.arm();
    try {
      const unmuted = await setMic(args.unmute);
      const socket = await openIngestSocket(workDir, (s) => onIngest(s, args.format));
      stream = { socket, format: args.format, spare };
      log.info({ format: args.format, unmuted }, "stream opened");
      return { ok: true, result: { socketPath: socket.path, unmuted } };
    } catch (err) {
      await spare.stop();
      throw err;
    }
  };

  const closeStream = async (): Promise<Answer> => {
    const s = stream;
    stream = null;
    if (s) {
      await s.socket.close();
      // The ingest's ffmpeg drains what pulse holds and exits; stop it so the stream ends now.
      await stopCurrent();
      await s.spare.stop();
      log.info("stream closed");
    }
    return { ok: true, result: { status: "closed" } };
  };

  const run = async (request: WorkerRequest): Promise<Answer> => {
    if (closed) return refuse(409, "The session is ending.");
    if (!deps.inCall()) return refuse(409, "The bot is not in the call.");
    switch (request.op) {
      case "play":
        return play(opArgsSchemas.play.parse(request.args));
      case "stop": {
        const args = opArgsSchemas.stop.parse(request.args);
        await stopCurrent();
        const muted = args.muteAfter ? (await setMicMuted(page, true, log)).ok : false;
        return { ok: true, result: { status: "stopped", muted } };
      }
      case "stream_open":
        return openStream(opArgsSchemas.stream_open.parse(request.args));
      case "stream_close":
        return closeStream();
      default:
        return refuse(400, `Unknown audio operation ${request.op}.`);
    }
  };

  return {
    handle(request) {
      const answer = queue.then(() => run(request));
      queue = answer.catch(() => undefined);
      return answer;
    },
    async close() {
      if (closed) return;
      closed = true;
      await queue.catch(() => undefined);
      const s = stream;
      stream = null;
      await s?.socket.close();
      await stopCurrent();
      await s?.spare.stop();
    },
  };
}
