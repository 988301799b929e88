/**
 * BOT_ACCESS_TOKEN guard (decisions.md "Access"): every bot route except GET /, the docs, the
 * health probes and the ingest PUT (which carries its own token) needs
 * `Authorization: Bearer <BOT_ACCESS_TOKEN>`. Compared in constant time so response timing does
 * not leak how many leading characters of a guess were right.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { RequestHandler } from "express";
import { AppError } from "../http/errors.ts";

const digest = (value: string): Buffer => createHash("sha256").update(value, "utf8").digest();

export function requireBotToken(token: string | undefined): RequestHandler {
  if (!token) return (_req, _res, next) => next();
  // Hashing first gives equal-length buffers, so the comparison does not reveal the length either.
  const expected = digest(token);
  return (req, _res, next) => {
    const header = req.headers.authorization ?? "";
    const match = /^Bearer\s+(.+)$/i.exec(header.trim());
    if (match?.[1] && timingSafeEqual(digest(match[1]), expected)) {
      next();
      return;
    }
    next(
      new AppError("invalid_token", {
        message: match ? "Invalid access token." : "Not authenticated: send Authorization: Bearer <BOT_ACCESS_TOKEN>.",
      }),
    );
  };
}
