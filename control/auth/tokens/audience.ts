/**
 * Audience of locally issued access tokens: `LocalLogin:Audience`, else `Oidc:ClientId` (the
 * spec's default, so an API already checking the external provider's audience accepts local
 * tokens unchanged), else the issuer itself, so a token is never minted without any `aud` for a
 * resource server to pin. Must match the bearer pipeline's `localAudience` (bearer/local-verifier.ts).
 */
import type { Config } from "../../config/index.ts";

export function accessTokenAudience(config: Config): string {
  return config.LocalLogin.Audience ?? config.Oidc.ClientId ?? config.LocalLogin.Issuer;
}
