/**
 * Request logging: every request gets an id (`req.id`, sent back as X-Request-Id) and `req.log`,
 * a child logger bound to the request (id, method, path with secrets redacted; never the body or
 * headers); pino-http writes one line per request (at info) when it ends.
 *
 * pino-http builds that child logger eagerly, serializing and redacting the request, even when
 * the level is above info and no request line will be written: ~0.1 ms of event-loop CPU per
 * request, ~14% of a refresh (issue #3, --cpu-prof). While info is off, only the id is set and
 * `req.log` is built on first use (an error line), from pino-http's own logger and bindings, so
 * every line written is the same. The level is checked per request.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { RequestHandler } from "express";
import { pinoHttp } from "pino-http";
import type { Logger } from "../../shared/log/logger.ts";

/** Secrets in paths (ingest and listen tokens, token/code query parameters) never reach the log. */
export function redactPath(url: string): string {
  return url.replace(/(\/ingest\/)[^/?]+/, "$1[redacted]").replace(/(\/listen\/)[^/?]+/, "$1[redacted]").replace(/([?&](token|code)=)[^&]+/gi, "$1[redacted]");
}

function requestId(_req: IncomingMessage, res: ServerResponse): string {
  const id = randomUUID();
  res.setHeader("X-Request-Id", id);
  return id;
}

/** `req.log` as pino-http would bind it, created when first read. */
function bindLazily(req: IncomingMessage, logger: Logger): void {
  Object.defineProperty(req, "log", {
    configurable: true,
    enumerable: true,
    get() {
      const log = logger.child({ req });
      Object.defineProperty(req, "log", { value: log, writable: true, configurable: true, enumerable: true });
      return log;
    },
    set(value: Logger) {
      Object.defineProperty(req, "log", { value, writable: true, configurable: true, enumerable: true });
    },
  });
}

export function requestLogging(logger: Logger): RequestHandler {
  const http = pinoHttp({
    logger,
    genReqId: requestId,
    // Bodies are never logged; headers only through the redacting serializers.
    serializers: {
      req: (req: { id: unknown; method: string; url: string }) => ({ id: req.id, method: req.method, url: redactPath(req.url) }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
    autoLogging: { ignore: (req) => req.url === "/healthz" },
  });
  return (req, res, next) => {
    if (http.logger.isLevelEnabled("info")) return http(req, res, next);
    req.id = requestId(req, res);
    bindLazily(req, http.logger);
    next();
  };
}
