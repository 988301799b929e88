/**
 * The worker's end of a live stream: a unix socket in the session's private work dir. The control
 * plane connects once per ingest PUT and pipes the HTTP body in; the bytes go straight into an
 * ffmpeg's stdin. Nothing is buffered beyond the socket and pipe buffers, so a producer pushing
 * faster than real time is held back by the kernel (socket → HTTP request → TCP window).
 */
import { rm } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";

export interface IngestSocket {
  readonly path: string;
  close(): Promise<void>;
}

/** A name inside workDir (mode 0700): only this worker and the control plane can reach it. */
export function ingestSocketPath(workDir: string): string {
  return join(workDir, "ingest.sock");
}

export async function openIngestSocket(workDir: string, onConnection: (socket: Socket) => void): Promise<IngestSocket> {
  const path = ingestSocketPath(workDir);
  // A socket file left by an earlier stream of this session would make listen() fail with EADDRINUSE.
  await rm(path, { force: true });
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    onConnection(socket);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => {
      server.off("error", reject);
      resolve();
    });
  });
  let closing: Promise<void> | undefined;
  return {
    path,
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        // Ends an ongoing ingest: its PUT sees the socket close and answers.
        for (const s of sockets) s.destroy();
        await closed;
        await rm(path, { force: true });
      })();
      return closing;
    },
  };
}
