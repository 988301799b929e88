/**
 * Carries one ingest PUT body to the worker's unix socket (worker/playback/ingest-socket.ts)
 * without holding it: `pipe` pauses the request while the socket is full, so a producer pushing
 * faster than real time waits on TCP (Rule 3) and the server's memory stays flat.
 */
import type { Socket } from "node:net";
import type { Request } from "express";

export interface IngestResult {
  bytes: number;
  /** False when the stream was closed, replaced or the session ended before the body did. */
  complete: boolean;
}

export interface RunningIngest {
  readonly done: Promise<IngestResult>;
  end(): void;
}

export function pipeIngest(req: Request, socket: Socket): RunningIngest {
  let bytes = 0;
  let bodyEnded = false;
  req.on("data", (chunk: Buffer) => {
    bytes += chunk.length;
  });
  req.once("end", () => (bodyEnded = true));
  const done = new Promise<IngestResult>((resolve) => {
    // The worker closes its end once ffmpeg has taken the last byte (or when it drops the
    // ingest): either way the PUT is over.
    socket.once("close", () => resolve({ bytes, complete: bodyEnded }));
    // A producer that hangs up mid-body: the worker plays what arrived and stops.
    req.once("close", () => {
      if (!bodyEnded) socket.end();
    });
  });
  socket.on("error", () => socket.destroy());
  req.pipe(socket);
  return {
    done,
    end: () => socket.destroy(),
  };
}
