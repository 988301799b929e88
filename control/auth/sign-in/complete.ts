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
import { fail } from "../../http/errors.ts";
import { StampMoved } from "../tokens/session-store.ts";

export interface CompleteSignIn {
  userId: string;
  /** RFC 8176 methods used so far (e.g. ["pwd"], ["pwd", "otp", "mfa"]). */
  amr: string[];
  authTime: Date;
  twoFactor?: { source: "otp" | "recovery" | "device" | "passkey"; at: Date } | undefined;
  req: Request;
  /**
   * The security stamp read with the first factor (or recorded on the challenge): the session is
   * started only while the user's stamp is still this one, in the same unit that inserts it, so a
   * password change that commits while this sign-in is under way wins (collapsed 401). Null for
   * an account created in this very request (registration, invitation completion).
   */
  expectedStamp?: string | null;
  /** Set by the two-factor and device steps; null otherwise. */
  recoveryCodesRunningLow?: boolean;
  device?: { token: string; expiresIn: number } | null;
}

export async function completeSignIn(ctx: AuthContext, input: CompleteSignIn): Promise<TokenPairBody> {
  let session: Awaited<ReturnType<typeof createSession>>;
  try {
    session = await createSession(ctx, {
      userId: input.userId,
      amr: input.amr,
      authTime: input.authTime,
      twoFactor: input.twoFactor,
      client: clientInfo(input.req, ctx.config.LocalLogin.IpAddressStorage),
      expectedStamp: input.expectedStamp ?? null,
    });
  } catch (error) {
    if (!(error instanceof StampMoved)) throw error;
    ctx.logger.info({ userId: input.userId }, "sign-in refused: the credentials changed while it was under way");
    throw fail.invalidGrant(error);
  }
  const { family, profile, refreshToken } = session;
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
