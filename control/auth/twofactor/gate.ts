/**
 * The second-factor gate between a verified first factor (password, magic link) and tokens
 * (Sign-in rule 1): a user with a confirmed TOTP enrolment or a passkey gets a challenge, unless a valid
 * trusted-device token comes with the request (body `deviceToken` or the `X-Toamaisutaa-Device`
 * header, Sign-in rule 7). A device sign-in carries the time of the device's original live second
 * factor as `toa_2fa_at`, so freshness policies still demand a live factor when it matters.
 */
import type { Request } from "express";
import type { AuthContext } from "../context.ts";
import { signInWithDevice } from "../devices/redeem.ts";
import { completeSignIn } from "../sign-in/complete.ts";
import type { TokenPairBody } from "../sign-in/token-pair.ts";
import { mergeAmr } from "../tokens/access-token.ts";
import { createChallenge, type ChallengeBody } from "./challenge.ts";
import { METHODS } from "./methods.ts";
import { recoveryCodesRunningLow } from "./recovery-codes.ts";

export const DEVICE_HEADER = "x-toamaisutaa-device";

export interface FirstFactor {
  userId: string;
  amr: string[];
  authTime: Date;
  /** Security stamp read with the first factor; the session or challenge needs it unchanged. */
  stamp: string;
  /** The body's `deviceToken`; the header is read when it is absent. */
  deviceToken?: string | null | undefined;
  req: Request;
}

export type GateOutcome = { kind: "tokens"; body: TokenPairBody } | { kind: "challenge"; body: ChallengeBody };

export function presentedDeviceToken(req: Request, fromBody?: string | null): string | null {
  if (typeof fromBody === "string" && fromBody !== "") return fromBody;
  const header = req.get(DEVICE_HEADER);
  return header !== undefined && header !== "" ? header : null;
}

/** Enrolled: a confirmed TOTP, or a registered passkey (itself a second factor) while passkeys are on. */
export async function hasSecondFactor(ctx: AuthContext, userId: string): Promise<boolean> {
  const { totp, passkey } = await ctx.signIn.secondFactors(userId);
  return totp || (ctx.config.Passkeys.Enabled && passkey);
}

export async function secondFactorGate(ctx: AuthContext, input: FirstFactor): Promise<GateOutcome> {
  const { userId, amr, authTime, req, stamp } = input;
  if (!ctx.config.TwoFactor.Enabled || !(await hasSecondFactor(ctx, userId))) {
    return { kind: "tokens", body: await completeSignIn(ctx, { userId, amr, authTime, req, expectedStamp: stamp }) };
  }
  const deviceToken = presentedDeviceToken(req, input.deviceToken);
  if (deviceToken !== null && ctx.config.TrustedDevices.Enabled) {
    const device = await signInWithDevice(ctx, userId, deviceToken);
    if (device.outcome === "trusted") {
      const body = await completeSignIn(ctx, {
        userId,
        amr: mergeAmr(amr, [...METHODS.device]),
        authTime,
        twoFactor: { source: "device", at: device.device.twoFactorAt },
        req,
        expectedStamp: stamp,
        recoveryCodesRunningLow: (await recoveryCodesRunningLow(ctx.db, userId)) === true,
        device: device.next,
      });
      return { kind: "tokens", body };
    }
    ctx.logger.info({ userId, reason: device.outcome === "refused" ? device.reason : undefined }, "trusted-device token not accepted: challenge instead");
  }
  return { kind: "challenge", body: await createChallenge(ctx, { userId, amr, authTime, req, stamp }) };
}
