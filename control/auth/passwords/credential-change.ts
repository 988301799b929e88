/**
 * What every password change, reset and admin set does beside writing the hash (Account rule 4):
 * revoke every local session, un-trust every device, delete every passkey, retire every reset and
 * magic link still out, and move the security stamp. An attacker who learned the old password (the usual reason to change it) loses every
 * foothold they built with it. Access tokens already issued run out on their own.
 * Callers run this inside the transaction that writes the new hash, so either all of it happens
 * or none.
 */
import { randomUUID } from "node:crypto";
import type { Db } from "../../db/client.ts";
import type { AuthContext } from "../context.ts";
import { revokeUserFamilies } from "../sessions/revoke.ts";

type Tx = Parameters<Parameters<Db["$transaction"]>[0]>[0];

export interface SideEffectOptions {
  /** Recorded as the families' revokeReason (e.g. "password-changed", "password-reset"). */
  reason: string;
  /** Also retire outstanding email-verification links (password change; Account rule 4). */
  retireEmailVerification?: boolean;
}

export async function revokeAllCredentialsSideEffects(ctx: AuthContext, tx: Tx, userId: string, options: SideEffectOptions): Promise<{ revokedFamilies: string[] }> {
  const now = ctx.now();
  // The stamp moves FIRST: on PostgreSQL this takes the user row's lock before the families are
  // read, so a session start racing this change either finishes before (and its family is found
  // and revoked below) or waits and sees the new stamp (tokens/session-store-postgres.ts).
  await tx.user.update({ where: { id: userId }, data: { securityStamp: randomUUID() } });
  const revokedFamilies = await revokeUserFamilies(ctx, { userId, reason: options.reason }, tx);
  await tx.trustedDevice.deleteMany({ where: { userId } });
  await tx.passkey.deleteMany({ where: { userId } });
  // A pending sign-in link is a door the change shuts too, like the sessions.
  const kinds = ["password-reset", "magic-link", ...(options.retireEmailVerification ? ["email-verification"] : [])];
  await tx.singleUseToken.updateMany({
    where: { userId, kind: { in: kinds }, consumedAt: null, retiredAt: null },
    data: { retiredAt: now },
  });
  return { revokedFamilies };
}
