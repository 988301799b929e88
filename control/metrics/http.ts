/**
 * HTTP metrics: requests by route template (`/status/:session_id`, never the id itself), method
 * and status, with their duration, and the requests in flight. The template is the documented
 * path mountRoute records on the response; anything no route matched counts as `unmatched`, so
 * a scanner's random paths cannot create series.
 */
import type { RequestHandler } from "express";
import { http } from "./registry.ts";

export function httpMetrics(): RequestHandler {
  return (req, res, next) => {
    const started = performance.now();
    http.inFlight.inc();
    let done = false;
    const end = (): void => {
      if (done) return;
      done = true;
      http.inFlight.dec();
      const route = typeof res.locals.route === "string" ? res.locals.route : req.route ? `${req.baseUrl}${String((req.route as { path: unknown }).path)}` : "unmatched";
      const labels = { route, method: req.method, status: String(res.statusCode) };
      http.requests.inc(labels);
      http.duration.observe(labels, (performance.now() - started) / 1000);
    };
    res.once("finish", end);
    res.once("close", end);
    next();
  };
}
