/**
 * `GET /audio/{session_id}/listen/{token}` with `Upgrade: websocket`: the token in the path is
 * the only credential (as for ingest), checked BEFORE the upgrade, so an unknown or revoked token
 * gets a plain HTTP 404 and never a WebSocket. A token has one WebSocket at a time (409).
 * Nothing here logs the URL: it carries the token.
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer } from "ws";
import type { SessionStatus } from "../../../shared/ipc/messages.ts";
import type { Logger } from "../../../shared/log/logger.ts";
import { parseListenPath } from "../../../shared/listen/protocol.ts";
import { refuseUpgrade, type UpgradeHandler } from "../../http/upgrades.ts";
import { bridgeListener } from "./bridge.ts";
import { connectWorkerSocket } from "../worker-socket.ts";
import type { ListenerRegistry } from "./registry.ts";
import { ListenTaps } from "./taps.ts";

/** Consumers send nothing we read; a large message from one is refused, not buffered. */
const MAX_INCOMING_BYTES = 4 * 1024;

export interface UpgradeDeps {
  registry: ListenerRegistry;
  logger: Logger;
  /** Null while the session's worker runs; once it is gone, the status it ends with (null: unknown). */
  sessionEnd: (sessionId: string) => { status: SessionStatus | null } | null;
}

export function listenUpgrade(deps: UpgradeDeps): { handler: UpgradeHandler; close(): void } {
  const { registry, logger } = deps;
  // perMessageDeflate off: PCM barely compresses, and zlib per frame would cost more CPU than the audio path.
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: MAX_INCOMING_BYTES, clientTracking: false });
  const taps = new ListenTaps();

  const accept = async (req: IncomingMessage, socket: Duplex, head: Buffer, sessionId: string, token: string): Promise<void> => {
    const upgrade = String(req.headers.upgrade ?? "").toLowerCase();
    if (req.method !== "GET" || upgrade !== "websocket" || !req.headers["sec-websocket-key"]) {
      return refuseUpgrade(socket, 400, "Expected a WebSocket upgrade (GET with Upgrade: websocket).");
    }
    const listener = registry.match(sessionId, token);
    if (!listener) return refuseUpgrade(socket, 404, "Unknown or closed listener.");
    if (listener.connection) return refuseUpgrade(socket, 409, "This listener is already connected.");
    // Claimed before the first await, so two racing upgrades cannot both get through.
    let revoked = false;
    const claim = { close: () => void (revoked = true) };
    listener.connection = claim;
    const release = () => {
      if (listener.connection === claim) listener.connection = null;
    };
    const events = await connectWorkerSocket(listener.socketPath).catch(() => null);
    if (!events || revoked || socket.destroyed) {
      events?.destroy();
      release();
      return refuseUpgrade(socket, 404, "Unknown or closed listener.");
    }
    socket.once("close", release);
    wss.handleUpgrade(req, socket, head, (ws) => {
      socket.off("close", release);
      if (revoked) {
        events.destroy();
        release();
        ws.close(1000, "listener closed");
        return;
      }
      bridgeListener({
        ws,
        socket: socket as Duplex & { cork(): void; uncork(): void },
        events,
        taps,
        listener,
        logger,
        sessionEnd: () => deps.sessionEnd(sessionId),
      });
    });
  };

  return {
    handler(req, socket, head) {
      const target = parseListenPath(req.url ?? "");
      if (!target) return false;
      accept(req, socket, head, target.sessionId, target.token).catch((err: unknown) => {
        logger.error({ err: err instanceof Error ? err.message : "unknown" }, "listen upgrade failed");
        refuseUpgrade(socket, 500, "Internal server error.");
      });
      return true;
    },
    close() {
      wss.close();
    },
  };
}
