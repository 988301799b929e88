/**
 * Any instance answers any route (issue #19): a request for an owner-bound route
 * (shared/cluster/protocol.ts) whose session runs on another live instance is forwarded there over
 * HTTP with CLUSTER_SECRET, streamed both ways (an ingest PUT or an upload is piped, never held
 * whole). The middleware is keyed on the session's owner only, so routes mounted after it under
 * those shapes (evidence, the live timeline) are forwarded without knowing about the cluster.
 */
import { request as httpRequest, Agent as HttpAgent, type ClientRequest, type IncomingHttpHeaders } from "node:http";
import { request as httpsRequest, Agent as HttpsAgent } from "node:https";
import type { Request, RequestHandler, Response } from "express";
import type { Pool } from "pg";
import { FORWARD_PATH, INTERNAL_PREFIX, SECRET_HEADER, VIA_HEADER, ownerBoundSession } from "../../shared/cluster/protocol.ts";
import type { Logger } from "../../shared/log/logger.ts";
import { AppError } from "../http/errors.ts";
import { alive } from "./instances.ts";
import { isForwarded } from "./internal.ts";
import { routeTemplate } from "./route-template.ts";

/** Headers of one hop only (RFC 9110 7.6.1), never passed on. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade", SECRET_HEADER, VIA_HEADER]);

export interface ForwardOptions {
  pool: Pool;
  instanceId: string;
  secret: string;
  logger: Logger;
  /** `POST /stop` of a session no instance has taken yet: ended where it is (no bot to ask). */
  stopUnplaced: (sessionId: string) => Promise<void>;
}

interface Owner {
  instanceId: string | null;
  url: string | null;
  alive: boolean | null;
}

export function ownerForwarding(o: ForwardOptions): RequestHandler {
  const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };
  const log = o.logger.child({ component: "forward" });
  return (req, res, next) => {
    if (isForwarded(req)) return next();
    const sessionId = ownerBoundSession(req.url);
    if (sessionId === null) return next();
    void ownerOf(o.pool, sessionId).then(
      (owner) => {
        if (owner && !owner.instanceId && req.method === "POST" && req.url.startsWith("/stop/")) {
          return void o.stopUnplaced(sessionId).then(() => next(), next);
        }
        // Unknown, not placed yet, ours, or on a dead instance: answered here (404, 409, the stored outcome).
        if (!owner?.instanceId || owner.instanceId === o.instanceId || !owner.alive || !owner.url) return next();
        // Counted under the route it will match at the owner, not as `unmatched`.
        res.locals.route ??= routeTemplate(req.app, req.method, req.path);
        forward(req, res, `${owner.url}${INTERNAL_PREFIX}${FORWARD_PATH}${req.originalUrl}`, o, agents, (err) => {
          log.warn({ err: err.message, session_id: sessionId, owner: owner.instanceId }, "forwarding to the session's instance failed");
          next(new AppError("service_unavailable", { message: "The instance running this session cannot be reached; try again.", headers: { "Retry-After": "5" } }));
        });
      },
      (err: unknown) => next(err),
    );
  };
}

async function ownerOf(pool: Pool, sessionId: string): Promise<Owner | null> {
  const { rows } = await pool.query<Owner>(
    `SELECT b."instanceId" AS "instanceId", i.url, ${alive("i")} AS alive FROM "BotSession" b LEFT JOIN "ClusterInstance" i ON i.id = b."instanceId" WHERE b.id = $1`,
    [sessionId],
  );
  return rows[0] ?? null;
}

/**
 * Sends `req` on to `target` and streams the answer back; `fail` when nothing could be answered.
 * Exported for its test (test/cluster/forward-retry.test.ts).
 */
export function forward(
  req: Request,
  res: Response,
  target: string,
  o: ForwardOptions,
  agents: { http: HttpAgent; https: HttpsAgent },
  fail: (err: Error) => void,
): void {
  const url = new URL(target);
  const headers: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(name)) headers[name] = value;
  headers[SECRET_HEADER] = o.secret;
  headers[VIA_HEADER] = o.instanceId;
  // express.json already read a JSON body: send what it parsed; any other body is piped as it comes.
  const consumed = req.complete || req.readableEnded;
  let replay: Buffer | null = null;
  if (consumed) {
    replay = req.body === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(req.body));
    headers["content-length"] = String(replay.length);
  } else if (headers["content-length"] === undefined) {
    headers["transfer-encoding"] = "chunked";
  }
  const send = url.protocol === "https:" ? httpsRequest : httpRequest;
  let upstream: ClientRequest;
  // The caller went away: so does the forwarded request (an ingest push ends at the owner too).
  res.on("close", () => {
    if (!res.writableFinished) upstream.destroy();
  });
  const attempt = (retried: boolean): void => {
    let answered = false;
    upstream = send(url, { method: req.method, headers, agent: url.protocol === "https:" ? agents.https : agents.http }, (answer) => {
      answered = true;
      const out: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(answer.headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
      res.writeHead(answer.statusCode ?? 502, out);
      answer.pipe(res);
      answer.on("error", () => res.destroy());
    });
    const sent = upstream;
    sent.on("error", (err: NodeJS.ErrnoException) => {
      if (answered || res.headersSent) return void res.destroy();
      // A kept-alive socket the owner closed (its idle timeout) just as this request went out:
      // nothing reached it, so a body held whole is sent once more on a new connection.
      if (!retried && replay && sent.reusedSocket && err.code === "ECONNRESET") return attempt(true);
      fail(err);
    });
    if (replay) sent.end(replay);
    else req.pipe(sent);
  };
  attempt(false);
}
