/**
 * The last step of every sign-in (password, two-factor verify, magic link, registration,
 * invitation): start a session (refresh family) and answer the token pair. A first factor that
 * leads to a challenge instead never calls this; the two-factor step calls it once the challenge
 * is met, passing the second factor's source and time.
 */
import type { Request } from "express";
import type { AuthContext } from "../context.ts";
import { clientInfo } from "../sessions/client-info.ts";
import { issueAccessTokenFrom } from "../tokens/access-token.ts";
import { createSession } from "../tokens/refresh-tokens.ts";
import type { TokenPairBody } from "./token-pair.ts";

export interface CompleteSignIn {
  userId: string;
  /** RFC 8176 methods used so far (e.g. ["pwd"], ["pwd", "otp", "mfa"]). */
  amr: string[];
  authTime: Date;
  twoFactor?: { source: "otp" | "recovery" | "device" | "passkey"; at: Date } | undefined;
  req: Request;
  /** Set by the two-factor and device steps; null otherwise. */
  recoveryCodesRunningLow?: boolean;
  device?: { token: string; expiresIn: number } | null;
}

export async function completeSignIn(ctx: AuthContext, input: CompleteSignIn): Promise<TokenPairBody> {
  const { family, profile, refreshToken } = await createSession(ctx, {
    userId: input.userId,
    amr: input.amr,
    authTime: input.authTime,
    twoFactor: input.twoFactor,
    client: clientInfo(input.req, ctx.config.LocalLogin.IpAddressStorage),
  });
  const access = await issueAccessTokenFrom(ctx, family, profile);
  return tokenPair(access, refreshToken, {
    recoveryCodesRunningLow: input.recoveryCodesRunningLow ?? false,
    device: input.device ?? null,
  });
}

export function tokenPair(
  access: { token: string; expiresIn: number },
  refreshToken: string,
  extra: { recoveryCodesRunningLow?: boolean; device?: { token: string; expiresIn: number } | null } = {},
): TokenPairBody {
  return {
    access_token: access.token,
    refresh_token: refreshToken,
    expires_in: access.expiresIn,
    token_type: "Bearer",
    recovery_codes_running_low: extra.recoveryCodesRunningLow ? true : null,
    device_token: extra.device?.token ?? null,
    device_expires_in: extra.device?.expiresIn ?? null,
  };
}
