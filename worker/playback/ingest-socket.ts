/**
 * The worker's end of a live stream: a unix socket in the session's private work dir. The control
 * plane connects once per ingest PUT and pipes the HTTP body in; the bytes go straight into an
 * ffmpeg's stdin. Nothing is buffered beyond the socket and pipe buffers, so a producer pushing
 * faster than real time is held back by the kernel (socket → HTTP request → TCP window).
 */
import type { Socket } from "node:net";
import { join } from "node:path";
import { openUnixServer } from "../sockets/unix-server.ts";

export interface IngestSocket {
  readonly path: string;
  close(): Promise<void>;
}

/** A name inside workDir (mode 0700): only this worker and the control plane can reach it. */
export function ingestSocketPath(workDir: string): string {
  return join(workDir, "ingest.sock");
}

export async function openIngestSocket(workDir: string, onConnection: (socket: Socket) => void): Promise<IngestSocket> {
  const server = await openUnixServer(ingestSocketPath(workDir), onConnection);
  return {
    path: server.path,
    // Ends an ongoing ingest at once: its PUT sees the socket close and answers.
    close: () => server.close(),
  };
}
