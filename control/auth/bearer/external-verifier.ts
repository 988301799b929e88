/**
 * Verifies access tokens of the external identity provider named by `Oidc:Authority`: its
 * discovery document names the issuer and the JWKS, which jose fetches and caches
 * (createRemoteJWKSet refetches on an unknown `kid`, so provider key rotation needs no restart).
 *
 * Discovery is lazy: the provider being down at our startup must not stop the service, and a
 * failed discovery is retried by the next request instead of being cached.
 */
import { createRemoteJWKSet, jwtVerify, type JWTVerifyResult } from "jose";
import { z } from "zod";
import { ConfigError, type Config } from "../../config/index.ts";
import type { Logger } from "../../../shared/log/logger.ts";

export interface ExternalVerifier {
  /** `Oidc:Authority` without a trailing slash: tokens whose `iss` matches it come here. */
  issuer: string;
  verify(token: string, now: Date): Promise<JWTVerifyResult>;
}

const discoverySchema = z.object({ issuer: z.string().min(1), jwks_uri: z.string().min(1) });

/** A provider that does not answer within this is treated as down (the request gets 401). */
const DISCOVERY_TIMEOUT_MS = 5000;

/**
 * HMAC would let anyone holding the provider's *public* key (published in its JWKS) mint tokens
 * by using the key bytes as the HS256 secret (algorithm confusion); `none` is no signature at all.
 */
const FORBIDDEN_ALGORITHM = /^(none|HS\d+)$/i;

export const withoutTrailingSlash = (url: string): string => url.replace(/\/+$/, "");

export function createExternalVerifier(config: Config, logger: Logger): ExternalVerifier | null {
  const oidc = config.Oidc;
  if (oidc.Authority === undefined) return null;
  const authority = withoutTrailingSlash(oidc.Authority);
  const algorithms = [...oidc.Algorithms];
  const refused = algorithms.filter((a) => FORBIDDEN_ALGORITHM.test(a));
  if (refused.length > 0) {
    throw new ConfigError("Oidc:Algorithms", `${refused.join(", ")} cannot be accepted from an identity provider (unsigned or HMAC tokens allow forgery): list asymmetric algorithms only, e.g. RS256, ES256`);
  }
  if (algorithms.length === 0) throw new ConfigError("Oidc:Algorithms", "list at least one algorithm, e.g. RS256");
  const audience = oidc.Audience ?? oidc.ClientId;
  if (audience === undefined) {
    // Without an audience check a token the provider minted for any other client would pass.
    throw new ConfigError("Oidc:Audience", "Oidc:Authority is set: set Oidc:Audience or Oidc:ClientId to the audience this API's tokens carry");
  }
  if (authority === withoutTrailingSlash(config.LocalLogin.Issuer)) {
    throw new ConfigError("LocalLogin:Issuer", "must differ from Oidc:Authority, or local and external tokens could not be told apart");
  }
  requireHttps(oidc.RequireHttpsMetadata, authority, "Oidc:Authority");

  let discovered: Promise<{ issuer: string; keys: ReturnType<typeof createRemoteJWKSet> }> | undefined;
  const discover = async () => {
    const url = `${authority}/.well-known/openid-configuration`;
    const response = await fetch(url, { signal: AbortSignal.timeout(DISCOVERY_TIMEOUT_MS), headers: { accept: "application/json" } });
    if (!response.ok) throw new Error(`discovery document ${url} answered ${response.status}`);
    const doc = discoverySchema.parse(await response.json());
    // OpenID Connect Discovery 4.3: the document's issuer must be the one we asked; otherwise a
    // document served elsewhere could make us trust another issuer's tokens.
    if (withoutTrailingSlash(doc.issuer) !== authority) throw new Error(`discovery issuer ${doc.issuer} does not match Oidc:Authority ${authority}`);
    requireHttps(oidc.RequireHttpsMetadata, doc.jwks_uri, "Oidc:RequireHttpsMetadata");
    return { issuer: doc.issuer, keys: createRemoteJWKSet(new URL(doc.jwks_uri), { timeoutDuration: DISCOVERY_TIMEOUT_MS }) };
  };

  return {
    issuer: authority,
    async verify(token, now) {
      discovered ??= discover().catch((error: unknown) => {
        discovered = undefined;
        logger.warn({ err: error, authority }, "identity provider discovery failed");
        throw error;
      });
      const { issuer, keys } = await discovered;
      return jwtVerify(token, keys, {
        issuer,
        audience,
        algorithms,
        clockTolerance: Math.round(oidc.ClockSkew / 1000),
        currentDate: now,
        requiredClaims: ["exp", "sub"],
      });
    },
  };
}

function requireHttps(required: boolean, url: string, key: string): void {
  if (!required) return;
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    throw new ConfigError("Oidc:Authority", `not a URL: ${url}`);
  }
  if (protocol !== "https:") {
    // Keys fetched over plain HTTP can be replaced by anyone on the path, who then signs tokens.
    throw new ConfigError(key, `${url} is not https: use an https authority (Oidc:RequireHttpsMetadata=false only for local development)`);
  }
}
