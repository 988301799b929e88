/**
 * The cluster's internal routes, under INTERNAL_PREFIX and outside the public OpenAPI document:
 * every caller must present CLUSTER_SECRET (compared in constant time, hashed first so its length
 * does not leak either); without it the answer is 403 and nothing else happens.
 *
 * - `INTERNAL_PREFIX + FORWARD_PATH + <public URL>`: a public request forwarded by another
 *   instance; it continues through the app as that URL, marked forwarded so it is never
 *   forwarded again.
 * - `GET INTERNAL_PREFIX/instance`: this instance's id, state and running sessions.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { Request, RequestHandler } from "express";
import { FORWARD_PATH, INTERNAL_PREFIX, SECRET_HEADER } from "../../shared/cluster/protocol.ts";
import { AppError } from "../http/errors.ts";

const FORWARDED = Symbol("toamaisutaa.cluster.forwarded");
const digest = (value: string): Buffer => createHash("sha256").update(value, "utf8").digest();

export const isForwarded = (req: Request): boolean => (req as unknown as Record<symbol, unknown>)[FORWARDED] === true;

export function internalRoutes(o: { secret: string; describe: () => Record<string, unknown> }): RequestHandler {
  const expected = digest(o.secret);
  return (req, res, next) => {
    const url = req.url;
    if (url !== INTERNAL_PREFIX && !url.startsWith(`${INTERNAL_PREFIX}/`) && !url.startsWith(`${INTERNAL_PREFIX}?`)) return next();
    const given = req.headers[SECRET_HEADER];
    if (typeof given !== "string" || !timingSafeEqual(digest(given), expected)) {
      return next(new AppError("forbidden", { message: "Internal cluster route: the cluster secret is required." }));
    }
    const forwardPrefix = `${INTERNAL_PREFIX}${FORWARD_PATH}/`;
    if (url.startsWith(forwardPrefix)) {
      (req as unknown as Record<symbol, unknown>)[FORWARDED] = true;
      req.url = url.slice(forwardPrefix.length - 1);
      req.originalUrl = req.url;
      return next();
    }
    if (req.method === "GET" && (url === `${INTERNAL_PREFIX}/instance` || url.startsWith(`${INTERNAL_PREFIX}/instance?`))) {
      res.setHeader("Cache-Control", "no-store");
      return void res.json(o.describe());
    }
    next(new AppError("not_found"));
  };
}
