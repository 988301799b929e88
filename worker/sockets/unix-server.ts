/**
 * A unix socket server in the session's private work dir (mode 0700: only this worker and the
 * control plane reach it), the shape both the ingest and the listen sockets need: a stale socket
 * file of an earlier run removed first, every connection kept so a close can end them, a socket
 * error ending only that connection, and the file removed again on close.
 *
 * A unix socket's path holds at most 107 bytes (sun_path); a deep RECORDINGS_DIR goes past that
 * and listen() fails with EINVAL. Such a socket lives in a short private directory of its own
 * instead (mode 0700 under the temp dir), removed with it: callers pass the path they get back
 * to the control plane, never the one they asked for.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";

/** sun_path is 108 bytes on Linux, with its terminating NUL. */
export const MAX_SOCKET_PATH_BYTES = 107;

async function bindablePath(path: string): Promise<{ path: string; privateDir: string | null }> {
  if (Buffer.byteLength(path) <= MAX_SOCKET_PATH_BYTES) return { path, privateDir: null };
  const base = Buffer.byteLength(tmpdir()) <= 64 ? tmpdir() : "/tmp";
  // mkdtemp creates the directory with mode 0700: only this user reaches the socket.
  const privateDir = await mkdtemp(join(base, "toa-sock-"));
  return { path: join(privateDir, basename(path)), privateDir };
}

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

export async function openUnixServer(wanted: string, onConnection: (socket: Socket) => void): Promise<UnixServer> {
  const { path, privateDir } = await bindablePath(wanted);
  // A socket file left behind would make listen() fail with EADDRINUSE.
  await rm(path, { force: true });
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    onConnection(socket);
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(path, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (error) {
    if (privateDir) await rm(privateDir, { recursive: true, force: true });
    throw error;
  }
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
        await rm(privateDir ?? path, { recursive: true, force: true });
      })();
      return closing;
    },
  };
}
