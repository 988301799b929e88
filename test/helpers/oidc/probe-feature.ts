/**
 * Test-only routes behind the bearer pipeline, its policies and the rate limiter, mounted under
 * `/auth/probe` (auth error shapes) through `startTestApp({ features: [probeFeature()] })`, so the
 * edges are tested over real HTTP without depending on the core auth routes.
 */
import { Router } from "express";
import type { Feature } from "../../../control/app/feature.ts";
import { requireAdmin, requireBearer, requireFreshSecondFactor, requireTwoFactor, principalOf, type BearerContext } from "../../../control/auth/bearer/index.ts";
import { authRateLimit, clientKey, nat64Prefixes } from "../../../control/auth/rate-limit/index.ts";
import { jwksRoute } from "../../../control/auth/routes/jwks.ts";
import { signingKeysFor } from "../../../control/auth/tokens/keys.ts";
import type { AuthContext } from "../../../control/auth/context.ts";

export function probeFeature(): Feature {
  return {
    name: "auth-probe",
    async mount({ app, config, database, logger, now, host, registry }) {
      const ctx: BearerContext = { config, db: database.db, logger, now, roleProvider: host.roleProvider };
      const router = Router();
      const bearer = requireBearer(ctx);
      const show = (req: Parameters<typeof principalOf>[0], res: { json(v: unknown): void }) => res.json(principalOf(req));
      router.get("/probe/me", bearer, (req, res) => show(req, res));
      router.get("/probe/admin", bearer, requireAdmin(ctx), (req, res) => show(req, res));
      router.get("/probe/mfa", bearer, requireTwoFactor(), (req, res) => show(req, res));
      router.get("/probe/fresh", bearer, requireFreshSecondFactor(config.TwoFactor.FreshnessWindow, now), (req, res) => show(req, res));
      const limit = authRateLimit(ctx);
      const prefixes = nat64Prefixes(config);
      const echo = (req: { ip?: string }, res: { json(v: unknown): void }) => res.json({ ip: req.ip, key: clientKey(req.ip, prefixes) });
      router.post("/probe/limited-a", limit, (req, res) => echo(req, res));
      router.post("/probe/limited-b", limit, (req, res) => echo(req, res));
      router.post("/probe/unlimited", (req, res) => echo(req, res));
      jwksRoute({ ctx: { config, prefix: "/auth" } as AuthContext, keys: await signingKeysFor(config), target: { router, prefix: "/auth", registry } });
      app.use("/auth", router);
      return {};
    },
  };
}
