/**
 * Signing in with a trusted device's token (Sign-in rules 1, 3, 4). The token rotates on every
 * use: one transaction swaps the row's hash for the new token's (conditional on the old hash and
 * on the device being live, checked by row count) and records the old hash as spent. So of
 * concurrent uses of one token exactly one rotates it; every later presentation of a spent token,
 * a racing loser included, is indistinguishable from a copied token being replayed and revokes the
 * device (the theft signal), committed in its own statement although the sign-in falls back to a
 * challenge. The absolute expiry never moves.
 */
import type { TrustedDevice } from "../../../prisma/generated/sqlite/client.ts";
import type { AuthContext } from "../context.ts";
import { hashToken, newOpaqueToken } from "../tokens/opaque.ts";
import { secondsLeft, type IssuedDeviceToken } from "./trust.ts";

export type DeviceSignIn =
  | { outcome: "trusted"; device: TrustedDevice; next: IssuedDeviceToken }
  | { outcome: "refused"; reason: "unknown" | "foreign" | "revoked" | "expired" | "stamp-changed" | "spent" };

/** Bounds the lookup: tokens are 43 base64url characters; anything far longer is no token. */
const MAX_TOKEN_LENGTH = 512;

export async function signInWithDevice(ctx: AuthContext, userId: string, presented: string): Promise<DeviceSignIn> {
  if (presented.length > MAX_TOKEN_LENGTH) return { outcome: "refused", reason: "unknown" };
  const now = ctx.now();
  const presentedHash = hashToken(presented);
  const device = await ctx.db.trustedDevice.findUnique({ where: { tokenHash: presentedHash }, include: { user: { select: { securityStamp: true } } } });
  if (!device) return spentOrUnknown(ctx, userId, presentedHash, now);
  // Another account's token is ignored, not rotated: it proves nothing about this account.
  if (device.userId !== userId) return { outcome: "refused", reason: "foreign" };
  if (device.revokedAt !== null) return { outcome: "refused", reason: "revoked" };
  if (device.expiresAt.getTime() <= now.getTime()) return { outcome: "refused", reason: "expired" };
  if (device.securityStamp !== device.user.securityStamp) {
    await revokeDevice(ctx, device.id, "stamp-changed", now);
    return { outcome: "refused", reason: "stamp-changed" };
  }
  const next = newOpaqueToken();
  const rotated = await ctx.db.$transaction(async (tx) => {
    const { count } = await tx.trustedDevice.updateMany({
      where: { id: device.id, tokenHash: presentedHash, revokedAt: null, expiresAt: { gt: now }, securityStamp: device.user.securityStamp },
      data: { tokenHash: hashToken(next), lastUsedAt: now },
    });
    if (count !== 1) return false;
    await tx.spentDeviceToken.create({ data: { tokenHash: presentedHash, deviceId: device.id, spentAt: now } });
    return true;
  });
  if (!rotated) return theft(ctx, device.id, userId, now);
  return { outcome: "trusted", device, next: { token: next, expiresIn: secondsLeft(device.expiresAt, now) } };
}

async function spentOrUnknown(ctx: AuthContext, userId: string, presentedHash: string, now: Date): Promise<DeviceSignIn> {
  const spent = await ctx.db.spentDeviceToken.findUnique({ where: { tokenHash: presentedHash }, include: { device: { select: { userId: true } } } });
  if (!spent) return { outcome: "refused", reason: "unknown" };
  // A spent token is the theft signal whoever presents it (Sign-in rule 3): revoked either way.
  return theft(ctx, spent.deviceId, spent.device.userId, now);
}

/**
 * Sign-in rule 3 on ANY presentation: a spent device token revokes its device before the
 * password is even looked at (issue #14). Only a sign-in whose password was right reached the
 * device check before, so a thief replaying a copied token with a wrong or no password left the
 * device trusted. True when the token was a spent one.
 */
export async function revokeIfSpent(ctx: AuthContext, presented: string): Promise<boolean> {
  if (presented.length > MAX_TOKEN_LENGTH) return false;
  const spent = await ctx.db.spentDeviceToken.findUnique({ where: { tokenHash: hashToken(presented) }, include: { device: { select: { userId: true } } } });
  if (!spent) return false;
  await theft(ctx, spent.deviceId, spent.device.userId, ctx.now());
  return true;
}

async function theft(ctx: AuthContext, deviceId: string, userId: string, now: Date): Promise<DeviceSignIn> {
  const revoked = await revokeDevice(ctx, deviceId, "token-reuse", now);
  // Loud on purpose (the theft signal); the device's family id only, never the token.
  ctx.logger.warn({ deviceId, userId, alreadyRevoked: !revoked }, "spent trusted-device token presented: device revoked");
  return { outcome: "refused", reason: "spent" };
}

/** True when this call revoked the device. */
export async function revokeDevice(ctx: AuthContext, deviceId: string, reason: string, now: Date = ctx.now()): Promise<boolean> {
  const { count } = await ctx.db.trustedDevice.updateMany({ where: { id: deviceId, revokedAt: null }, data: { revokedAt: now, revokeReason: reason } });
  return count === 1;
}
