/**
 * Which account a link mailed to an address opens (magic links, password resets). The account
 * that proved the address holds it. With nobody's proof, a single account that typed it is the
 * one; but when several accounts typed it and none proved it, nobody can tell which of them the
 * mailbox's owner made. Sending the link to the oldest would hand the mailbox's owner the
 * account of whoever typed their address first (account pre-hijacking: they sign in to it, its
 * maker's session still live), so no link is sent. The owner signs in by user name and proves the
 * address (`POST /email`), which releases it from the others (Account rule 2).
 */
import type { Db } from "../../db/client.ts";
import { normaliseEmail } from "../sign-in/find-credential.ts";

export type Recipient<C> = { credential: C } | { ambiguous: true } | null;

export async function mailRecipient(db: Db, email: string) {
  const candidates = await db.passwordCredential.findMany({ where: { normalizedEmail: normaliseEmail(email) }, orderBy: { createdAt: "asc" }, take: 20 });
  return pickRecipient(candidates);
}

export function pickRecipient<C extends { emailConfirmedAt: Date | null }>(candidates: readonly C[]): Recipient<C> {
  const proven = candidates.find((c) => c.emailConfirmedAt !== null);
  if (proven) return { credential: proven };
  if (candidates.length > 1) return { ambiguous: true };
  return candidates[0] ? { credential: candidates[0] } : null;
}
