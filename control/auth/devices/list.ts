/**
 * The trusted-device list of a user (login-service.md "Trusted device summary"): live devices
 * only (not revoked, not past their absolute expiry). `isCurrent` marks the device whose token the
 * caller sent in `X-Toamaisutaa-Device` (Account rule 18); the token is compared by its hash, the
 * only form the server holds.
 */
import type { AuthContext } from "../context.ts";
import { hashToken } from "../tokens/opaque.ts";
import { isoWithOffset } from "../../../shared/timestamp.ts";

export interface DeviceSummary {
  id: string;
  label: string;
  userAgent: string;
  ipAddress: string;
  createdAt: string;
  lastUsedAt: string;
  expiresAt: string;
  isCurrent: boolean;
}

export async function listDevices(ctx: AuthContext, userId: string, presentedToken: string | null): Promise<DeviceSummary[]> {
  const now = ctx.now();
  const currentHash = presentedToken === null ? null : hashToken(presentedToken);
  const devices = await ctx.db.trustedDevice.findMany({
    where: { userId, revokedAt: null, expiresAt: { gt: now } },
    orderBy: [{ lastUsedAt: "desc" }, { createdAt: "desc" }],
  });
  return devices.map((d) => ({
    id: d.id,
    // Never invented: a device trusted without a label shows an empty one.
    label: d.label ?? "",
    userAgent: d.userAgent ?? "",
    ipAddress: d.ipAddress ?? "",
    createdAt: isoWithOffset(d.createdAt),
    lastUsedAt: isoWithOffset(d.lastUsedAt),
    expiresAt: isoWithOffset(d.expiresAt),
    isCurrent: currentHash !== null && d.tokenHash === currentHash,
  }));
}

/** Revokes one live device of the user; false for an unknown, foreign or already revoked id. */
export async function revokeOwnDevice(ctx: AuthContext, userId: string, deviceId: string): Promise<boolean> {
  const { count } = await ctx.db.trustedDevice.updateMany({ where: { id: deviceId, userId, revokedAt: null }, data: { revokedAt: ctx.now(), revokeReason: "revoked-by-user" } });
  return count === 1;
}

export async function revokeAllDevices(ctx: AuthContext, userId: string, reason: string): Promise<number> {
  const { count } = await ctx.db.trustedDevice.updateMany({ where: { userId, revokedAt: null }, data: { revokedAt: ctx.now(), revokeReason: reason } });
  return count;
}
