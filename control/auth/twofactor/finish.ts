/**
 * The end of a sign-in whose second factor was just proven live (code, recovery code or passkey
 * on a challenge): the session's amr is the first factor's plus the second's, `toa_2fa_at` is now,
 * and with `rememberDevice` the device becomes trusted (TrustedDevices:Enabled).
 */
import type { Request } from "express";
import type { TwoFactorChallenge } from "../../../prisma/generated/sqlite/client.ts";
import type { AuthContext } from "../context.ts";
import { trustDevice } from "../devices/trust.ts";
import { completeSignIn } from "../sign-in/complete.ts";
import type { TokenPairBody } from "../sign-in/token-pair.ts";
import { mergeAmr, parseAmr } from "../tokens/access-token.ts";
import { METHODS, type SecondFactorSource } from "./methods.ts";
import { recoveryCodesRunningLow } from "./recovery-codes.ts";

export interface LiveSecondFactor {
  challenge: TwoFactorChallenge;
  source: Exclude<SecondFactorSource, "device">;
  /** The passkey that answered (source "passkey"): a device trusted now is trusted through it. */
  passkeyId?: string | undefined;
  req: Request;
  rememberDevice: boolean;
  deviceLabel?: string | null | undefined;
}

export async function finishLiveSecondFactor(ctx: AuthContext, input: LiveSecondFactor): Promise<TokenPairBody> {
  const { challenge } = input;
  const at = ctx.now();
  const device =
    input.rememberDevice && ctx.config.TrustedDevices.Enabled
      ? await trustDevice(ctx, { userId: challenge.userId, label: input.deviceLabel, req: input.req, twoFactorAt: at, passkeyId: input.passkeyId ?? null, stamp: challenge.securityStamp ?? "" })
      : null;
  return completeSignIn(ctx, {
    userId: challenge.userId,
    amr: mergeAmr(parseAmr(challenge.amr), [...METHODS[input.source]]),
    authTime: challenge.authTime,
    twoFactor: { source: input.source, at },
    req: input.req,
    // Checked again where the session is inserted: a change between redemption and here wins too.
    expectedStamp: challenge.securityStamp ?? "",
    recoveryCodesRunningLow: (await recoveryCodesRunningLow(ctx.db, challenge.userId)) === true,
    device,
  });
}
