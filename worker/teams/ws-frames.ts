import type { Page, WebSocket } from "playwright-core";

/**
 * One message of the Teams page's signalling WebSocket (teams-dom.md "2026 facts"): frames start
 * with `3:::` (socket.io 0.9: type 3, no id, no endpoint) followed by JSON `{url, headers, body}`.
 * `body` arrives as an object or as a JSON string; it is parsed when it is one.
 */
export interface SignallingFrame {
  /** The page's WebSocket URL (not the frame's `url`). */
  socketUrl: string;
  url: string;
  headers: Record<string, unknown>;
  body: unknown;
  receivedAt: number;
}

/** socket.io 0.9 framing: `type:id:endpoint:data`; type 3 (message) and 4 (json) carry data. */
const SOCKET_IO = /^[34]:[^:]*:[^:]*:([\s\S]*)$/;

/** Parses one text frame; null for anything that is not a `{url, ...}` message (heartbeats, binary). */
export function parseSignallingFrame(payload: string | Buffer, socketUrl = ""): SignallingFrame | null {
  if (typeof payload !== "string") return null;
  const m = SOCKET_IO.exec(payload);
  const json = m ? m[1] : payload.trimStart().startsWith("{") ? payload : null;
  if (!json) return null;
  let outer: unknown;
  try {
    outer = JSON.parse(json);
  } catch {
    return null;
  }
  if (typeof outer !== "object" || outer === null) return null;
  const o = outer as Record<string, unknown>;
  if (typeof o.url !== "string") return null;
  let body: unknown = o.body;
  if (typeof body === "string") {
    try {
      body = JSON.parse(body);
    } catch {
      // A plain string body stays as it is.
    }
  }
  const headers = typeof o.headers === "object" && o.headers !== null ? (o.headers as Record<string, unknown>) : {};
  return { socketUrl, url: o.url, headers, body, receivedAt: Date.now() };
}

export interface FrameListener {
  dispose(): void;
}

/**
 * Calls `onFrame` for every signalling message any WebSocket of `page` receives, from now on
 * (Playwright reports the sockets a page opens; register before the page navigates). Several
 * listeners may watch one page (end codes here, the roster elsewhere).
 */
export function listenSignalling(page: Page, onFrame: (frame: SignallingFrame) => void): FrameListener {
  const sockets = new Set<WebSocket>();
  const perSocket = new Map<WebSocket, (data: { payload: string | Buffer }) => void>();
  const onSocket = (ws: WebSocket) => {
    const handler = (data: { payload: string | Buffer }) => {
      const frame = parseSignallingFrame(data.payload, ws.url());
      if (frame) onFrame(frame);
    };
    sockets.add(ws);
    perSocket.set(ws, handler);
    ws.on("framereceived", handler);
    ws.once("close", () => {
      sockets.delete(ws);
      perSocket.delete(ws);
    });
  };
  page.on("websocket", onSocket);
  return {
    dispose() {
      page.off("websocket", onSocket);
      for (const ws of sockets) {
        const handler = perSocket.get(ws);
        if (handler) ws.off("framereceived", handler);
      }
      sockets.clear();
      perSocket.clear();
    },
  };
}
