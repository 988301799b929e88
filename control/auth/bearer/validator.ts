/**
 * The one bearer-token validator: a token is routed by its (unverified) `iss` to the local or the
 * external verifier, and only a verified token becomes a Principal. Routing by `iss` chooses the
 * key and algorithms; it trusts nothing, because the chosen verifier re-checks `iss`.
 */
import { decodeJwt, type JWTPayload } from "jose";
import { AppError } from "../../http/errors.ts";
import type { AuthContext } from "../context.ts";
import { signingKeysFor } from "../tokens/keys.ts";
import { createExternalVerifier, type ExternalVerifier } from "./external-verifier.ts";
import { verifyLocalToken } from "./local-verifier.ts";
import { isIdToken } from "./token-kind.ts";
import type { Principal } from "./principal.ts";
import { provisionExternalUser } from "./provision.ts";
import { rolesFromClaims } from "./roles.ts";

/** What the bearer pipeline needs from the auth context (host applications can build just this). */
export type BearerContext = Pick<AuthContext, "config" | "db" | "logger" | "now" | "roleProvider">;

export interface BearerValidator {
  authenticate(token: string): Promise<Principal>;
}

const validators = new WeakMap<BearerContext, BearerValidator>();

/**
 * The validator of a context, built once so every route shares one JWKS cache and key set.
 * Throws ConfigError at first use (feature mount) when the external provider settings are unsafe.
 */
export function bearerValidator(ctx: BearerContext): BearerValidator {
  let validator = validators.get(ctx);
  if (!validator) {
    validator = createValidator(ctx);
    validators.set(ctx, validator);
  }
  return validator;
}

function createValidator(ctx: BearerContext): BearerValidator {
  const { config, logger } = ctx;
  const external: ExternalVerifier | null = createExternalVerifier(config, logger);
  const localEnabled = config.LocalLogin.Enabled;

  const refuse = (cause: unknown): AppError => new AppError("invalid_token", { cause });

  return {
    async authenticate(token) {
      let unverified: JWTPayload;
      try {
        unverified = decodeJwt(token);
      } catch (error) {
        throw refuse(error);
      }
      const iss = typeof unverified.iss === "string" ? unverified.iss : undefined;
      if (localEnabled && iss === config.LocalLogin.Issuer) {
        let payload: JWTPayload;
        try {
          ({ payload } = await verifyLocalToken(token, await signingKeysFor(config), config, ctx.now()));
        } catch (error) {
          throw refuse(error);
        }
        const subject = payload.sub as string;
        const roles = ctx.roleProvider ? await ctx.roleProvider(subject) : [];
        return principal(payload, { userId: subject, local: true, roles: [...roles] });
      }
      if (external && iss !== undefined && iss.replace(/\/+$/, "") === external.issuer) {
        let payload: JWTPayload;
        let idToken: boolean;
        try {
          const verified = await external.verify(token, ctx.now());
          payload = verified.payload;
          idToken = isIdToken(verified.protectedHeader, payload);
        } catch (error) {
          throw refuse(error);
        }
        // An ID token is for the client that asked for it, not a credential for this API
        // (Oidc:AcceptIdTokens opts in; such a token then proves no auth_time, Account rule 3).
        if (idToken && !config.Oidc.AcceptIdTokens) throw refuse(new Error("an ID token is not an access token (Oidc:AcceptIdTokens is off)"));
        const userId = await provisionExternalUser(ctx.db, payload.iss as string, payload.sub as string, payload);
        return principal(payload, { userId, local: false, roles: rolesFromClaims(payload, config.Oidc.RoleClaim), accessToken: !idToken });
      }
      throw refuse(new Error("token issuer is not accepted"));
    },
  };
}

function principal(payload: JWTPayload, known: { userId: string; local: boolean; roles: string[]; accessToken?: boolean }): Principal {
  const amr = Array.isArray(payload.amr) ? payload.amr.filter((v): v is string => typeof v === "string") : [];
  const sid = payload.toa_sid;
  return {
    userId: known.userId,
    local: known.local,
    roles: known.roles,
    issuer: payload.iss as string,
    subject: payload.sub as string,
    // toa_sid is ours: an external provider's claim of that name names no session of ours.
    sessionId: known.local && typeof sid === "string" ? sid : null,
    amr,
    claims: payload,
    accessToken: known.accessToken ?? true,
  };
}
