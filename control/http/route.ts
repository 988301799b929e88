/**
 * `mountRoute(router, registry, spec)`: mounts one endpoint on an Express router and documents it,
 * so the schema that validates a request is the one /docs shows (better-auth's
 * createAuthEndpoint pattern). Handlers receive parsed input and throw AppErrors on refusal.
 */
import type { NextFunction, Request, RequestHandler, Response, Router } from "express";
import type { z } from "zod";
import type { ErrorFamily } from "./errors.ts";
import type { DocumentedRoute, OpenApiRegistry } from "./openapi.ts";
import { notAnObject, parseInput } from "./validate.ts";

export interface RouteInput<B, Q> {
  req: Request;
  res: Response;
  body: B;
  query: Q;
  params: Record<string, string>;
}

export interface RouteSpec<BS extends z.ZodType | undefined, QS extends z.ZodType | undefined> extends Omit<DocumentedRoute, "path" | "body" | "query"> {
  /** Path relative to the router's mount point. */
  path: string;
  family: ErrorFamily;
  body?: BS;
  query?: QS;
  /** Middleware run before validation (authentication, rate limits, multipart parsing). */
  before?: RequestHandler[];
  handler: (input: RouteInput<BS extends z.ZodType ? z.output<BS> : undefined, QS extends z.ZodType ? z.output<QS> : undefined>) => Promise<void> | void;
}

export interface MountedRouter {
  router: Router;
  /** Prefix under which `router` is mounted, for the documented full path. */
  prefix: string;
  registry: OpenApiRegistry;
}

export function mountRoute<BS extends z.ZodType | undefined = undefined, QS extends z.ZodType | undefined = undefined>(
  target: MountedRouter,
  spec: RouteSpec<BS, QS>,
): void {
  const { path, family, before = [], handler, body, query, ...doc } = spec;
  target.registry.add({ ...doc, family, path: `${target.prefix}${path}` || "/", body, query });
  const run = async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    try {
      if (body && family === "bot" && !spec.bodyContentType && req.body === undefined && carriesBody(req)) throw notAnObject();
      const parsedBody = body ? parseInput(body, req.body, "body", family) : undefined;
      const parsedQuery = query ? parseInput(query, req.query, "query", family) : undefined;
      await handler({
        req,
        res,
        body: parsedBody as never,
        query: parsedQuery as never,
        params: req.params as Record<string, string>,
      });
    } catch (error) {
      next(error);
    }
  };
  const template = `${target.prefix}${path}` || "/";
  // The route template for metrics (control/metrics/http.ts), set before any `before` can refuse.
  const named = (_req: Request, res: Response, next: NextFunction): void => {
    res.locals.route = template;
    next();
  };
  target.router[spec.method](path, named, ...before, run);
}

/**
 * A body the JSON parser left alone (`text/plain`, a form): for a bot route that is a body that
 * is not an object, as pydantic says, never "no body" (an optional body would then take its
 * defaults and the caller's 8000 Hz would silently be 16000).
 */
function carriesBody(req: Request): boolean {
  return req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0;
}
