/**
 * `GET {prefix}/.well-known/jwks.json`: the public keys of `LocalLogin:SigningKeys`, so resource
 * servers verify local tokens without sharing a secret. Mapped only for asymmetric keys: an
 * HS256 secret has nothing publishable (login-service.md Endpoints).
 */
import { z } from "zod";
import { mountRoute } from "../../http/route.ts";
import type { AuthRouteDeps } from "../feature.ts";

/** Clients may cache the set briefly; rotation keeps the old key listed, so this is safe. */
const MAX_AGE_SECONDS = 300;

const jwksSchema = z.object({ keys: z.array(z.record(z.string(), z.unknown())) });

export function jwksRoute({ ctx, keys, target }: Pick<AuthRouteDeps, "ctx" | "keys" | "target">): void {
  const jwks = keys.jwks;
  if (ctx.config.LocalLogin.SigningKeys.length === 0 || jwks === null) return;
  mountRoute(target, {
    method: "get",
    path: "/.well-known/jwks.json",
    family: "auth",
    tag: "auth",
    summary: "Public keys that verify locally issued access tokens (JWKS)",
    responses: { 200: { description: "the JSON Web Key Set", schema: jwksSchema } },
    handler: ({ res }) => {
      // Public and the same for everyone: cacheable, unlike the rest of the auth routes.
      res.setHeader("Cache-Control", `public, max-age=${MAX_AGE_SECONDS}`);
      res.removeHeader("Pragma");
      res.json(jwks);
    },
  });
}
