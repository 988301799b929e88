/**
 * Whether an external provider's JWT is an ID token rather than an access token (issue #14
 * finding 4). Signature, issuer and audience cannot tell: a provider signs both with one key, and
 * an ID token's audience is the client id, which is often the API's audience too. What marks an
 * ID token:
 *  - `typ` saying so, in the JWT header (RFC 9068 gives access tokens `at+jwt`; some providers
 *    put `id_token+jwt`, `ID` or similar there) or in the payload's `typ` claim (Keycloak writes
 *    `ID` for ID tokens and `Bearer` for access tokens);
 *  - claims that only ID tokens carry (OpenID Connect Core 2 and 3.3.2.11): `nonce` (echoed from
 *    the authentication request), `at_hash` and `c_hash` (hashes binding the token to an access
 *    token or code issued with it).
 * An explicit access-token `typ` in the header (`at+jwt`) wins over nothing else: a token that
 * says it is an access token but carries `nonce` is still treated as an ID token.
 */
import type { JWTHeaderParameters, JWTPayload } from "jose";

const ID_TOKEN_ONLY_CLAIMS = ["nonce", "at_hash", "c_hash"] as const;

/**
 * `typ` values naming an ID token, in the header or the payload alike (`Oidc:AcceptIdTokens`
 * speaks of "`typ` ID" without saying where): a header `typ: ID` was let through while the same
 * value in the payload was refused (audit F4).
 */
const ID_TOKEN_TYPES = new Set(["id", "id_token", "idtoken", "id+jwt", "id_token+jwt", "idtoken+jwt"]);

const media = (typ: unknown): string => (typeof typ === "string" ? typ.trim().toLowerCase().replace(/^application\//, "") : "");

export function isIdToken(header: Pick<JWTHeaderParameters, "typ">, payload: JWTPayload): boolean {
  if (ID_TOKEN_TYPES.has(media(header.typ)) || ID_TOKEN_TYPES.has(media(payload.typ))) return true;
  return ID_TOKEN_ONLY_CLAIMS.some((claim) => payload[claim] !== undefined);
}
