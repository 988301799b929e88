/**
 * `noStore`: RFC 6749 section 5.1 says a response carrying tokens MUST send `Cache-Control:
 * no-store` (and `Pragma: no-cache` for HTTP/1.0 caches), so no browser or shared cache keeps a
 * copy of credentials. The auth router runs it before every route (feature.ts): token pairs,
 * challenges, TOTP secrets, recovery codes, step-up tokens, and the personal lists (sessions,
 * devices, passkeys) all get it without any route having to remember it; refusals get it too,
 * harmlessly. A public document that should be cached (the JWKS) sets its own header.
 */
import type { RequestHandler } from "express";

export const noStore: RequestHandler = (_req, res, next) => {
  res.setHeader("Cache-Control", "no-store");
  res.setHeader("Pragma", "no-cache");
  next();
};
