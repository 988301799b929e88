/**
 * Verifies access tokens this service signed (login-service.md Authentication 5): the local key
 * set's key and its pinned algorithms, issuer `LocalLogin:Issuer`, audience `localAudience`.
 */
import { jwtVerify, type JWTVerifyResult } from "jose";
import type { Config } from "../../config/index.ts";
import { accessTokenAudience } from "../tokens/audience.ts";
import type { SigningKeySet } from "../tokens/keys.ts";

/** Audience of local tokens: the one the issuer stamps (`LocalLogin:Audience` ?? `Oidc:ClientId` ?? issuer). */
export const localAudience = accessTokenAudience;

export async function verifyLocalToken(token: string, keys: SigningKeySet, config: Config, now: Date): Promise<JWTVerifyResult> {
  const options = {
    issuer: config.LocalLogin.Issuer,
    audience: localAudience(config),
    // Pinned to the key set's own algorithms: an HS256 token made with a published public key,
    // or an unsigned one, is refused before any key is tried.
    algorithms: keys.algorithms,
    currentDate: now,
    requiredClaims: ["exp", "sub"],
  };
  const key = keys.verifyKey;
  return key instanceof Uint8Array ? jwtVerify(token, key, options) : jwtVerify(token, key, options);
}
