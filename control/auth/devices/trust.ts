/**
 * Trusting a device after a live second factor (`rememberDevice` on a challenge answer). The
 * device token is a 256-bit opaque credential, stored only as its SHA-256; the row keeps the
 * user's security stamp (so a credential change invalidates it even if revocation were missed,
 * Sign-in rule 4), the time of the live second factor (`toa_2fa_at` of later device sign-ins) and
 * an absolute expiry that rotation never extends.
 */
import { randomUUID } from "node:crypto";
import type { Request } from "express";
import type { AuthContext } from "../context.ts";
import { lockDeviceCap } from "./cap-lock.ts";
import { clientInfo, storedAddress } from "../sessions/client-info.ts";
import { hashToken, newOpaqueToken } from "../tokens/opaque.ts";
import type { Tx } from "../twofactor/tx.ts";

/** Labels are the host's text, kept as given but bounded so a client cannot store megabytes. */
export const DEVICE_LABEL_MAX = 256;

export interface IssuedDeviceToken {
  token: string;
  /** Seconds left of the device's absolute lifetime (`device_expires_in`). */
  expiresIn: number;
}

export const secondsLeft = (expiresAt: Date, now: Date): number => Math.max(0, Math.floor((expiresAt.getTime() - now.getTime()) / 1000));

export async function trustDevice(ctx: AuthContext, input: { userId: string; label: string | null | undefined; req: Request; twoFactorAt: Date; passkeyId?: string | null; stamp: string }): Promise<IssuedDeviceToken> {
  // The live second factor's own time, so device sign-ins report exactly the session's toa_2fa_at.
  const now = input.twoFactorAt;
  const token = newOpaqueToken();
  const expiresAt = new Date(now.getTime() + ctx.config.TrustedDevices.Lifetime);
  const client = clientInfo(input.req, ctx.config.LocalLogin.IpAddressStorage);
  const id = randomUUID();
  await ctx.db.$transaction(async (tx) => {
    // Before the insert: a trust of this user still open must commit before this one counts.
    await lockDeviceCap(ctx, tx, input.userId);
    await tx.trustedDevice.create({
      data: {
        id,
        userId: input.userId,
        tokenHash: hashToken(token),
        label: input.label ?? null,
        userAgent: client.userAgent,
        ipAddress: storedAddress(input.req.ip, ctx.config.TrustedDevices.IpAddressStorage),
        // The stamp the sign-in was proven under, not the current one: a device trusted by a
        // sign-in that a credential change overtook is refused at its first use (Sign-in rule 4).
        securityStamp: input.stamp,
        twoFactorAt: now,
        // Deleting this passkey un-trusts the device (a cached factor dies with the factor).
        passkeyId: input.passkeyId ?? null,
        createdAt: now,
        lastUsedAt: now,
        expiresAt,
      },
    });
    await enforceCap(ctx, tx, input.userId, id, now);
  });
  return { token, expiresIn: secondsLeft(expiresAt, now) };
}

/**
 * `TrustedDevices:MaxDevicesPerUser` > 0: the oldest live devices beyond the cap are revoked. Runs
 * under lockDeviceCap, so every other trust of this user is committed (and counted) or waits.
 */
async function enforceCap(ctx: AuthContext, tx: Tx, userId: string, keep: string, now: Date): Promise<void> {
  const cap = ctx.config.TrustedDevices.MaxDevicesPerUser;
  if (cap <= 0) return;
  // The device just trusted always stays (it is the newest, whatever the clock's resolution).
  const live = await tx.trustedDevice.findMany({
    where: { userId, revokedAt: null, expiresAt: { gt: now }, id: { not: keep } },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    select: { id: true },
  });
  const beyond = live.slice(cap - 1).map((d) => d.id);
  if (beyond.length === 0) return;
  await tx.trustedDevice.updateMany({ where: { id: { in: beyond }, revokedAt: null }, data: { revokedAt: now, revokeReason: "device-cap" } });
  ctx.logger.info({ userId, deviceIds: beyond }, "trusted devices beyond MaxDevicesPerUser revoked");
}
