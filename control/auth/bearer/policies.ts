/**
 * Authorization policies as Express middleware, placed after requireBearer. Each fails closed:
 * no principal is 401, a principal that does not satisfy the policy is 403
 * (decisions.md: `{error: "forbidden", error_description}`).
 */
import type { RequestHandler } from "express";
import { AppError } from "../../http/errors.ts";
import type { Config } from "../../config/index.ts";
import { principalOf, type Principal } from "./principal.ts";

/** Names of the policies (login-service.md Authentication 3 and 4). */
export const POLICY = {
  admin: "Toamaisutaa.Admin",
  twoFactor: "Toamaisutaa.TwoFactor",
  freshSecondFactor: "FreshSecondFactor",
} as const;

function policy(check: (principal: Principal) => boolean, message: string): RequestHandler {
  return (req, _res, next) => {
    try {
      if (!check(principalOf(req))) throw new AppError("forbidden", { message });
      next();
    } catch (error) {
      next(error);
    }
  };
}

/**
 * `Toamaisutaa.Admin`: the principal holds `Oidc:AdminRole`. With no role configured nobody is
 * an admin (the admin endpoints are not even mapped then).
 */
export function requireAdmin(ctx: { config: Config }): RequestHandler {
  const role = ctx.config.Oidc.AdminRole;
  return policy((p) => role !== undefined && p.roles.includes(role), "This needs the administrator role.");
}

/** `Toamaisutaa.TwoFactor`: the session used a second factor (trusted-device sign-ins keep `mfa`). */
export function requireTwoFactor(): RequestHandler {
  return policy((p) => p.amr.includes("mfa"), "This needs a sign-in with a second factor.");
}

/**
 * A future `toa_2fa_at` within this much is clock drift between instances; beyond it the claim is
 * treated as unparseable rather than as "infinitely fresh".
 */
const FUTURE_TOLERANCE_MS = 60_000;

/**
 * `FreshSecondFactor` (login-service.md Account rule 16): `toa_2fa_at` (Unix seconds) exists,
 * parses as a number and is younger than `windowMs`. Stops a stolen long-lived session from
 * performing sensitive changes without a new live second factor.
 */
export function requireFreshSecondFactor(windowMs: number, now: () => Date = () => new Date()): RequestHandler {
  return policy((p) => isFresh(p.claims.toa_2fa_at, windowMs, now().getTime()), "This needs a recent second factor: verify again.");
}

export function isFresh(value: unknown, windowMs: number, nowMs: number): boolean {
  const seconds = typeof value === "number" ? value : typeof value === "string" && /^\s*\d+(\.\d+)?\s*$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isFinite(seconds)) return false;
  const age = nowMs - seconds * 1000;
  return age >= -FUTURE_TOLERANCE_MS && age < windowMs;
}
