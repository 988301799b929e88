/**
 * The route template a request will match (`/audio/:session_id/play`), for the metrics of a
 * request this instance forwards to the session's owner: it is answered before any route runs, and
 * would otherwise count as `unmatched` (control/metrics/http.ts). Looked up in the app's own
 * routes at request time, so a route mounted later under an owner-bound shape is named too.
 */
import type { Application } from "express";

/** What the Express 5 router exposes of a layer: its route, or a router mounted at the root. */
interface Layer {
  slash?: boolean;
  route?: { path: unknown; _handlesMethod(method: string): boolean };
  handle?: { stack?: Layer[] };
  match(path: string): unknown;
}

function find(stack: readonly Layer[], method: string, path: string): string | undefined {
  for (const layer of stack) {
    if (layer.route) {
      if (typeof layer.route.path === "string" && layer.match(path) && layer.route._handlesMethod(method)) return layer.route.path;
    } else if (layer.slash && layer.handle?.stack) {
      // Owner-bound routes are mounted at the root; a router under a prefix is never one of them.
      const found = find(layer.handle.stack, method, path);
      if (found) return found;
    }
  }
  return undefined;
}

export function routeTemplate(app: Application, method: string, path: string): string | undefined {
  const stack = (app as unknown as { router?: { stack?: Layer[] } }).router?.stack ?? [];
  return find(stack, method, path);
}
