/**
 * Owner forwarding for HTTP upgrades (the listen WebSocket, `GET /audio/{id}/listen/{token}`):
 * upgrades never reach Express, so the app offers features an `upgrade` hook (app/feature.ts) and
 * the cluster's runs first. An upgrade for a session another live instance runs is replayed to it
 * (the request head with CLUSTER_SECRET, under INTERNAL_PREFIX + FORWARD_PATH) and the two sockets
 * are joined byte for byte; the owner checks the secret, restores the public URL and lets its own
 * upgrade handlers answer.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { connect as netConnect, type Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import type { Duplex } from "node:stream";
import type { Pool } from "pg";
import { FORWARD_PATH, INTERNAL_PREFIX, SECRET_HEADER, VIA_HEADER, ownerBoundSession } from "../../shared/cluster/protocol.ts";
import type { Logger } from "../../shared/log/logger.ts";
import { alive } from "./instances.ts";

const FORWARDED = Symbol("toamaisutaa.cluster.forwarded-upgrade");
const digest = (value: string): Buffer => createHash("sha256").update(value, "utf8").digest();

export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer) => Promise<boolean>;

export function ownerUpgrade(o: { pool: Pool; instanceId: string; secret: string; logger: Logger }): UpgradeHandler {
  const expected = digest(o.secret);
  const log = o.logger.child({ component: "forward-upgrade" });
  return async (req, socket, head) => {
    const url = req.url ?? "/";
    if (url === INTERNAL_PREFIX || url.startsWith(`${INTERNAL_PREFIX}/`)) {
      const given = req.headers[SECRET_HEADER];
      const forwardPrefix = `${INTERNAL_PREFIX}${FORWARD_PATH}/`;
      if (typeof given !== "string" || !timingSafeEqual(digest(given), expected) || !url.startsWith(forwardPrefix)) {
        socket.end("HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
        return true;
      }
      req.url = url.slice(forwardPrefix.length - 1);
      (req as unknown as Record<symbol, unknown>)[FORWARDED] = true;
      return false;
    }
    if ((req as unknown as Record<symbol, unknown>)[FORWARDED] === true) return false;
    const sessionId = ownerBoundSession(url);
    if (sessionId === null) return false;
    const { rows } = await o.pool.query<{ instanceId: string | null; url: string | null; alive: boolean | null }>(
      `SELECT b."instanceId" AS "instanceId", i.url, ${alive("i")} AS alive FROM "BotSession" b LEFT JOIN "ClusterInstance" i ON i.id = b."instanceId" WHERE b.id = $1`,
      [sessionId],
    );
    const owner = rows[0];
    if (!owner?.instanceId || owner.instanceId === o.instanceId || !owner.alive || !owner.url) return false;
    const target = new URL(owner.url);
    const port = Number(target.port || (target.protocol === "https:" ? 443 : 80));
    const upstream: Socket = target.protocol === "https:" ? tlsConnect({ host: target.hostname, port, servername: target.hostname }) : netConnect({ host: target.hostname, port });
    const lines = [`${req.method ?? "GET"} ${INTERNAL_PREFIX}${FORWARD_PATH}${url} HTTP/1.1`];
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      const name = req.rawHeaders[i]!;
      const lower = name.toLowerCase();
      if (lower !== SECRET_HEADER && lower !== VIA_HEADER) lines.push(`${name}: ${req.rawHeaders[i + 1]}`);
    }
    lines.push(`${SECRET_HEADER}: ${o.secret}`, `${VIA_HEADER}: ${o.instanceId}`);
    upstream.once(target.protocol === "https:" ? "secureConnect" : "connect", () => {
      upstream.write(`${lines.join("\r\n")}\r\n\r\n`);
      if (head.length > 0) upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    upstream.on("error", (err) => {
      log.warn({ err: err.message, session_id: sessionId, owner: owner.instanceId }, "forwarding an upgrade to the session's instance failed");
      if (socket.writable) socket.end("HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 5\r\nContent-Length: 0\r\n\r\n");
      socket.destroy();
    });
    socket.on("error", () => upstream.destroy());
    socket.on("close", () => upstream.destroy());
    upstream.on("close", () => socket.destroy());
    return true;
  };
}
