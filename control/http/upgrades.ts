/**
 * HTTP upgrade requests (WebSockets) do not pass through Express: the server hands them here.
 * Features register handlers; the first that claims a request owns its socket, and a request
 * nobody claims is refused with 404 before any upgrade. `refuseUpgrade` writes such a refusal in
 * the bot API's `{detail}` shape on the raw socket.
 */
import type { IncomingMessage } from "node:http";
import { STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";

/** Returns true when it took the request (answered or upgraded it), false to pass it on. */
export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer) => boolean;

export class UpgradeRoutes {
  readonly #handlers: UpgradeHandler[] = [];

  add(handler: UpgradeHandler): void {
    this.#handlers.push(handler);
  }

  handle(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    // A socket error before an answer (client gone) must not crash the process.
    socket.on("error", () => socket.destroy());
    for (const handler of this.#handlers) if (handler(req, socket, head)) return;
    refuseUpgrade(socket, 404, "Not Found");
  }
}

/** Answers an upgrade request with a plain HTTP error and closes the connection. */
export function refuseUpgrade(socket: Duplex, status: number, detail: string, headers: Record<string, string> = {}): void {
  if (socket.destroyed) return;
  const body = JSON.stringify({ detail });
  const lines = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}`,
    "Content-Type: application/json",
    `Content-Length: ${Buffer.byteLength(body)}`,
    "Cache-Control: no-store",
    "Connection: close",
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
  ];
  socket.end(`${lines.join("\r\n")}\r\n\r\n${body}`);
}
