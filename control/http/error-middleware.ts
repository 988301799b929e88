/**
 * The one place that writes error responses. Handlers throw; this maps AppError to its wire
 * shape, body-parser and multer failures to catalogue codes, an unreachable database to 503 with
 * Retry-After, and anything else to a generic 500 with the request id (details go to the log,
 * never to the wire).
 */
import type { ErrorRequestHandler, Request } from "express";
import { AppError, type ErrorFamily } from "./errors.ts";
import { databaseUnavailable, isDatabaseUnreachable } from "./database-unreachable.ts";
import { notAnObject } from "./validate.ts";

/**
 * The configured prefix as the auth router is mounted (leading slash, no trailing one), so
 * `identity` or `/identity/` still puts `/identity/login` in the auth family.
 */
function mountedPrefix(prefix: string): string {
  const trimmed = prefix.trim().replace(/\/+$/, "");
  return trimmed === "" || trimmed.startsWith("/") ? trimmed : `/${trimmed}`;
}

/**
 * Express routes without regard to case (`/AUTH/login` reaches the auth router), so the family is
 * decided the same way: otherwise such a request would be answered by auth code in the bot shape.
 */
export function errorFamily(req: Request, authPrefix: string): ErrorFamily {
  const path = (req.originalUrl.split("?")[0] ?? "").toLowerCase();
  const prefix = mountedPrefix(authPrefix).toLowerCase();
  return path === prefix || path.startsWith(`${prefix}/`) ? "auth" : "bot";
}

/** Errors thrown by body parsers and multer, translated into the catalogue. */
function fromInfrastructure(error: unknown, family: ErrorFamily): AppError | undefined {
  const e = error as { type?: string; status?: number; code?: string; message?: string };
  if (e.type === "entity.parse.failed") {
    if (family === "auth") return new AppError("bad_request", { errors: ["The request body is not valid JSON."] });
    // The parser takes only objects and arrays; other valid JSON is pydantic's wrong type, or no body (null).
    const parsed = validJson((error as { body?: unknown }).body);
    if (parsed === null) return new AppError("validation_failed", { items: [{ loc: ["body"], msg: "Field required", type: "missing" }] });
    if (parsed !== undefined) return notAnObject();
    return new AppError("validation_failed", { items: [{ loc: ["body"], msg: "JSON decode error", type: "json_invalid" }] });
  }
  // A path parameter that is not valid percent-encoding (`/status/%ZZ`) cannot name anything.
  if (error instanceof URIError && e.status === 400) return new AppError("not_found", { cause: error });
  if (e.type === "entity.too.large" || e.code === "LIMIT_FILE_SIZE") return new AppError("payload_too_large", { cause: error });
  if (e.type === "encoding.unsupported" || e.type === "charset.unsupported") return new AppError("unsupported_media_type", { cause: error });
  // Every other limit of a multipart form (a second file, too many fields or parts, a long name).
  if (error instanceof Error && error.name === "MulterError") {
    const field = (error as { field?: string }).field;
    const loc = e.code === "LIMIT_UNEXPECTED_FILE" || e.code === "LIMIT_FILE_COUNT" ? ["body", "file"] : field ? ["body", field] : ["body"];
    return new AppError("validation_failed", { items: [{ loc, msg: e.message ?? "Unexpected form field", type: "value_error" }], cause: error });
  }
  return undefined;
}

export function errorMiddleware(authPrefix: string): ErrorRequestHandler {
  return (error, req, res, next) => {
    if (res.headersSent) {
      next(error);
      return;
    }
    const family = errorFamily(req, authPrefix);
    const appError =
      error instanceof AppError ? error : (fromInfrastructure(error, family) ?? (isDatabaseUnreachable(error) ? databaseUnavailable(error) : undefined));
    if (!appError) {
      req.log.error({ err: error }, "unhandled error");
      const id = String(req.id);
      res.status(500).json(family === "bot" ? { detail: `Internal server error (request id ${id})` } : { error: "server_error", error_description: `Internal server error (request id ${id})` });
      return;
    }
    if (appError.status >= 500) req.log.error({ err: appError, cause: appError.cause }, appError.message);
    else req.log.debug({ code: appError.code, cause: appError.cause instanceof Error ? appError.cause.message : undefined }, "request refused");
    for (const [name, value] of Object.entries(appError.options.headers ?? {})) res.setHeader(name, value);
    if (appError.code === "invalid_token") res.setHeader("WWW-Authenticate", 'Bearer error="invalid_token"');
    const body = appError.body(family);
    if (body === undefined) res.status(appError.status).end();
    else res.status(appError.status).json(body);
  };
}

/** The value of a body that is valid JSON after all; undefined when it is not. */
function validJson(body: unknown): unknown {
  if (typeof body !== "string") return undefined;
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return undefined;
  }
}
