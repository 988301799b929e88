/**
 * Who may hold an address (Account rules 2, 7, 8). Several accounts may have typed one address,
 * but only one may hold it proven; whoever proves it takes it from the accounts that only typed it.
 * A legacy user name shaped like the address also blocks it, so an address can never sign in as
 * two different accounts (identifier confusion).
 */
import { fail } from "../../http/errors.ts";
import { normaliseEmail } from "../sign-in/find-credential.ts";
import type { Tx } from "../single-use/index.ts";

export { normaliseEmail };

/**
 * Serialises every claim of one address: an upsert of a per-address row (a native
 * `INSERT ... ON CONFLICT DO UPDATE` on both providers) holds its row lock until the transaction
 * ends. Without it two accounts proving the same address at once would both pass the "nobody
 * holds it" check under READ COMMITTED and both end up holding it verified. Call it first in the
 * transaction, before the check. The rows live in MailCooldown (per-key timestamps) and the sweep
 * removes them like any stale cooldown.
 */
export async function lockAddress(tx: Tx, normalizedEmail: string, now: Date): Promise<void> {
  const key = `address-claim:${normalizedEmail}`;
  await tx.mailCooldown.upsert({ where: { key }, create: { key, lastAt: now }, update: { lastAt: now } });
}

/** The public sentence for an address another account holds (409 or 400, as the endpoint answers). */
export const ADDRESS_TAKEN = "Another account already uses this email address.";

/** Whether another local account holds the address verified or as its (legacy) user name. */
export async function addressHeldElsewhere(tx: Tx, userId: string, normalizedEmail: string): Promise<boolean> {
  const verified = await tx.passwordCredential.findFirst({
    where: { normalizedEmail, emailConfirmedAt: { not: null }, userId: { not: userId } },
    select: { userId: true },
  });
  if (verified) return true;
  const legacy = await tx.passwordCredential.findFirst({ where: { normalizedUserName: normalizedEmail, userId: { not: userId } }, select: { userId: true } });
  return legacy !== null;
}

/** 409 when another local account holds the address verified or as its (legacy) user name. */
export async function assertAddressFree(tx: Tx, userId: string, normalizedEmail: string): Promise<void> {
  if (await addressHeldElsewhere(tx, userId, normalizedEmail)) throw fail.conflict(ADDRESS_TAKEN);
}

/**
 * The address was just proven by `userId`: every other account that typed it without proving it
 * loses it (its credential Email and NormalizedEmail are cleared), so it can no longer sign in,
 * reset or get magic links with an address that belongs to someone else.
 */
export async function releaseFromOthers(tx: Tx, userId: string, normalizedEmail: string): Promise<number> {
  const { count } = await tx.passwordCredential.updateMany({
    where: { normalizedEmail, emailConfirmedAt: null, userId: { not: userId } },
    data: { email: null, normalizedEmail: null },
  });
  return count;
}
