/**
 * "The database cannot be reached" told apart from a bug: a request that fails because PostgreSQL
 * is down, restarting, refusing connections or cut off answers 503 with Retry-After (clients and
 * load balancers try again) instead of 500, and `/readyz` names the cause without Prisma's text
 * (which carries the database name and the query).
 *
 * The error comes as pg throws it (the pool and the hot paths), or wrapped by Prisma: its
 * initialization error, its connection codes, or a request error whose driver adapter error
 * (`meta.driverAdapterError.cause`) is the pg one converted.
 */
import { AppError } from "./errors.ts";

/** Readiness wording: what is wrong, nothing of the server's message. */
export const DATABASE_UNREACHABLE = "database unreachable";
const RETRY_AFTER_SECONDS = 5;

/** Prisma: cannot reach, timed out, server closed the connection, pool timeout. */
const PRISMA_CODES = new Set(["P1001", "P1002", "P1008", "P1017", "P2024"]);
/** @prisma/adapter-pg's kinds for socket and server-side connection failures. */
const ADAPTER_KINDS = new Set(["DatabaseNotReachable", "ConnectionClosed", "SocketTimeout", "TooManyConnections", "TlsConnectionError"]);
const SOCKET_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN", "EPIPE"]);
/** SQLSTATEs of a server that ends or refuses sessions: admin/crash shutdown, cannot connect now, too many connections. */
const SERVER_CODES = new Set(["57P01", "57P02", "57P03", "53300"]);
/** pg's own messages for a connection that went away or never came. */
const PG_MESSAGES = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/;

interface Shape {
  name?: unknown;
  code?: unknown;
  kind?: unknown;
  severity?: unknown;
  message?: unknown;
  cause?: unknown;
  errors?: unknown;
  meta?: { driverAdapterError?: { cause?: unknown } };
}

function matches(e: Shape): boolean {
  if (e.name === "PrismaClientInitializationError") return true;
  const code = typeof e.code === "string" ? e.code : "";
  if (PRISMA_CODES.has(code) || SOCKET_CODES.has(code) || SERVER_CODES.has(code) || code.startsWith("08")) return true;
  if (typeof e.kind === "string" && ADAPTER_KINDS.has(e.kind)) return true;
  // A FATAL server error ends the session: e.g. 55000 "database ... is not currently accepting connections".
  if (e.severity === "FATAL") return true;
  return typeof e.message === "string" && PG_MESSAGES.test(e.message);
}

/** True when `error` (or what it wraps) says the database cannot be reached. */
export function isDatabaseUnreachable(error: unknown): boolean {
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  while (queue.length > 0) {
    const e = queue.shift();
    if (typeof e !== "object" || e === null || seen.has(e)) continue;
    seen.add(e);
    const s = e as Shape;
    if (matches(s)) return true;
    queue.push(s.cause, s.meta?.driverAdapterError, s.meta?.driverAdapterError?.cause);
    if (Array.isArray(s.errors)) queue.push(...(s.errors as unknown[]));
  }
  return false;
}

/** The 503 a request gets when the database cannot be reached (bot `{detail}`, auth `temporarily_unavailable`). */
export function databaseUnavailable(cause: unknown): AppError {
  return new AppError("service_unavailable", {
    message: "The database cannot be reached right now; try again shortly.",
    headers: { "Retry-After": String(RETRY_AFTER_SECONDS) },
    cause,
  });
}
