/** `requireBearer(ctx)`: authenticates `Authorization: Bearer <token>` and sets req.principal. */
import type { RequestHandler } from "express";
import { AppError } from "../../http/errors.ts";
import { bearerValidator, type BearerContext } from "./validator.ts";

// RFC 6750 2.1: the scheme is case-insensitive; b64token characters only.
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i;

export function requireBearer(ctx: BearerContext): RequestHandler {
  const validator = bearerValidator(ctx);
  return async (req, _res, next) => {
    try {
      const match = BEARER.exec(req.headers.authorization ?? "");
      if (!match?.[1]) throw new AppError("invalid_token");
      req.principal = await validator.authenticate(match[1]);
      next();
    } catch (error) {
      next(error);
    }
  };
}
