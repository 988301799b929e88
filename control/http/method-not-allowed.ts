/**
 * 405 for a known path asked with a method it does not serve (`GET /join`, `DELETE /status/x`),
 * with the `Allow` header (RFC 9110 §15.5.6), instead of the 404 of an unknown path: a client
 * then learns that the path is right and the method wrong. Built from the documented routes, so
 * every route mounted through `mountRoute` is covered and nothing else.
 */
import type { RequestHandler } from "express";
import { AppError } from "./errors.ts";
import type { OpenApiRegistry } from "./openapi.ts";

function pattern(path: string): RegExp {
  const escaped = path
    .split("/")
    .map((part) => (part.startsWith(":") ? "[^/]+" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("/");
  // Express matches with or without one trailing slash.
  return new RegExp(`^${escaped === "" ? "" : escaped}/?$`);
}

export function methodNotAllowed(registry: OpenApiRegistry): RequestHandler {
  let table: { re: RegExp; methods: Set<string> }[] | null = null;
  const build = (): { re: RegExp; methods: Set<string> }[] => {
    const byPath = new Map<string, Set<string>>();
    for (const route of registry.routes) {
      const methods = byPath.get(route.path) ?? new Set<string>();
      methods.add(route.method.toUpperCase());
      if (route.method === "get") methods.add("HEAD");
      byPath.set(route.path, methods);
    }
    return [...byPath].map(([path, methods]) => ({ re: pattern(path), methods }));
  };
  return (req, _res, next) => {
    table ??= build();
    const path = req.path;
    const allowed = new Set<string>();
    for (const entry of table) if (entry.re.test(path)) for (const m of entry.methods) allowed.add(m);
    if (allowed.size === 0 || allowed.has(req.method)) {
      next();
      return;
    }
    next(new AppError("method_not_allowed", { headers: { Allow: [...allowed].sort().join(", ") } }));
  };
}
