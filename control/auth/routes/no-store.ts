/**
 * `noStore`: RFC 6749 section 5.1 says a response carrying tokens MUST send `Cache-Control:
 * no-store` (and `Pragma: no-cache` for HTTP/1.0 caches), so no browser or shared cache keeps a
 * copy of credentials. Put first in `before` of every route that answers tokens or other secrets
 * (token pairs, challenges, TOTP secrets, recovery codes); refusals get the header too, harmlessly.
 */
import type { RequestHandler } from "express";

export const noStore: RequestHandler = (_req, res, next) => {
  res.setHeader("Cache-Control", "no-store");
  res.setHeader("Pragma", "no-cache");
  next();
};
