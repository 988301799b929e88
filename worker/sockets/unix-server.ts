/**
 * A unix socket server in the session's private work dir (mode 0700: only this worker and the
 * control plane reach it), the shape both the ingest and the listen sockets need: a stale socket
 * file of an earlier run removed first, every connection kept so a close can end them, a socket
 * error ending only that connection, and the file removed again on close.
 */
import { rm } from "node:fs/promises";
import { createServer, type Socket } from "node:net";

export interface UnixServer {
  readonly path: string;
  /** Connections open now. */
  readonly sockets: ReadonlySet<Socket>;
  /**
   * Stops listening and ends every connection: each gets up to `graceMs` to close on its own
   * (after a last frame was written to it, say), then it is destroyed. Idempotent.
   */
  close(options?: { graceMs?: number }): Promise<void>;
}

export async function openUnixServer(path: string, onConnection: (socket: Socket) => void): Promise<UnixServer> {
  // A socket file left behind would make listen() fail with EADDRINUSE.
  await rm(path, { force: true });
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
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
    sockets,
    close({ graceMs = 0 } = {}) {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        if (graceMs > 0 && sockets.size > 0) {
          const drained = Promise.all([...sockets].map((s) => new Promise<void>((resolve) => s.once("close", () => resolve()))));
          await Promise.race([drained, new Promise((resolve) => setTimeout(resolve, graceMs).unref())]);
        }
        for (const s of sockets) s.destroy();
        await closed;
        await rm(path, { force: true });
      })();
      return closing;
    },
  };
}
