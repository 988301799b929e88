/**
 * `authRateLimit(ctx)`: the one per-address budget (login-service.md Limits,
 * `LocalLogin:RateLimit`) shared by every anonymous auth endpoint and every signed-in endpoint
 * that takes a password or code. Each such route puts the same middleware in `before`; the
 * middleware is built once per context, so all of them draw from one budget, which stops an
 * attacker from spreading guesses across endpoints (login, reset, 2FA verify...).
 *
 * Fixed window of `PermitLimit` requests per `Window`, keyed by clientKey (IPv6 /64, embedded
 * IPv4 for mapped and NAT64 addresses). `req.ip` honours X-Forwarded-For only from
 * `ForwardedHeaders` proxies (create-app.ts), so a spoofed header buys no fresh budget.
 *
 * Store: express-rate-limit's in-memory store, which is right for one instance. In cluster mode
 * (#19) the context carries a store in PostgreSQL (control/cluster/rate-limit-store.ts), so N
 * instances share one budget instead of allowing N x the limit.
 */
import type { RequestHandler } from "express";
import { rateLimit, type RateLimitInfo, type Store } from "express-rate-limit";
import { ConfigError, type Config } from "../../config/index.ts";
import { fail } from "../../http/errors.ts";
import { metrics } from "../../metrics/index.ts";
import { clientKey, parseNat64Prefix, WELL_KNOWN_NAT64, type Ipv6Prefix } from "./client-key.ts";

const limiters = new WeakMap<object, RequestHandler>();

export function authRateLimit(ctx: { config: Config; rateLimitStore?: Store }): RequestHandler {
  let limiter = limiters.get(ctx);
  if (!limiter) {
    limiter = createLimiter(ctx.config, ctx.rateLimitStore);
    limiters.set(ctx, limiter);
  }
  return limiter;
}

export function nat64Prefixes(config: Config): Ipv6Prefix[] {
  return [
    ...WELL_KNOWN_NAT64,
    ...config.LocalLogin.RateLimit.Nat64Prefixes.map((text, index) => {
      const prefix = parseNat64Prefix(text);
      if (!prefix) {
        throw new ConfigError(`LocalLogin:RateLimit:Nat64Prefixes:${index}`, `"${text}" is not an IPv6 prefix of length 32, 40, 48, 56, 64 or 96 (RFC 6052), e.g. 2001:db8:64::/96`);
      }
      return prefix;
    }),
  ];
}

function createLimiter(config: Config, store?: Store): RequestHandler {
  const settings = config.LocalLogin.RateLimit;
  if (!settings.Enabled) return (_req, _res, next) => next();
  const prefixes = nat64Prefixes(config);
  return rateLimit({
    windowMs: settings.Window,
    limit: settings.PermitLimit,
    keyGenerator: (req) => clientKey(req.ip, prefixes),
    ...(store ? { store } : {}),
    // The 429 goes through the error catalogue like every other refusal ({errors: [...]} + Retry-After).
    standardHeaders: false,
    legacyHeaders: false,
    handler: (req, _res, next) => {
      metrics.rateLimited();
      const resetTime = (req as { rateLimit?: RateLimitInfo }).rateLimit?.resetTime;
      const seconds = resetTime ? (resetTime.getTime() - Date.now()) / 1000 : settings.Window / 1000;
      next(fail.tooManyRequests(seconds, "Too many requests from your network address. Try again later."));
    },
    validate: {
      // The key generator subnets IPv6 with the library's own ipKeyGenerator (after NAT64), which
      // the library's static check cannot see.
      keyGeneratorIpFallback: false,
      // An unexpected X-Forwarded-For is ignored on purpose (not from a known proxy): no warning.
      xForwardedForHeader: false,
    },
  });
}
