/**
 * Who made a request, as the bearer pipeline established it. Local and external tokens produce
 * the same shape, so authorization and current-user lookup cannot tell them apart
 * (login-service.md "What the service does").
 */
import type { JWTPayload } from "jose";
import { AppError } from "../../http/errors.ts";

export interface Principal {
  /** Id of the local User row (external subjects are provisioned one on first sight). */
  userId: string;
  /** True for a token this service signed. */
  local: boolean;
  issuer: string;
  subject: string;
  /** `toa_sid` of a local token (the refresh family); null for external tokens. */
  sessionId: string | null;
  /** RFC 8176 authentication methods; empty when the token carries none. */
  amr: string[];
  claims: JWTPayload;
  roles: string[];
  /**
   * True when the token is an access token; false for an external ID token accepted under
   * `Oidc:AcceptIdTokens`, whose `auth_time` proves nothing about this request (Account rule 3).
   */
  accessToken: boolean;
}

declare module "express-serve-static-core" {
  interface Request {
    /** Set by requireBearer; absent on anonymous routes. */
    principal?: Principal;
  }
}

/** The principal of a request behind requireBearer; a route without one fails closed (401). */
export function principalOf(req: { principal?: Principal }): Principal {
  if (!req.principal) throw new AppError("invalid_token");
  return req.principal;
}
