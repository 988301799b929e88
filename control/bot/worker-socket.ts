/**
 * The control plane's connection to one of a worker's unix sockets (ingest, listen). Connecting
 * comes first, before any answer or upgrade: a worker that is gone (its session over) rejects
 * here, so the route can still refuse cleanly.
 */
import { connect, type Socket } from "node:net";

export function connectWorkerSocket(socketPath: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    socket.once("connect", () => {
      socket.off("error", reject);
      resolve(socket);
    });
    socket.once("error", reject);
  });
}
