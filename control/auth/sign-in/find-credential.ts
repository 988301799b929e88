/**
 * Which credential a login identifier names: a user name, or (containing `@`) an email address.
 * Several accounts may have typed one unproven address (Account rule 2), so an address prefers
 * the credential that proved it, then the oldest; an address nobody proved can still sign in.
 */
import type { Db } from "../../db/client.ts";
import type { SignInCredential, SignInStore } from "./sign-in-store.ts";

export const normaliseUserName = (userName: string): string => userName.trim().normalize("NFC").toLowerCase();
export const normaliseEmail = (email: string): string => email.trim().normalize("NFC").toLowerCase();

export async function findCredential(db: Db, identifier: string) {
  if (!identifier.includes("@")) {
    return db.passwordCredential.findUnique({ where: { normalizedUserName: normaliseUserName(identifier) } });
  }
  const candidates = await db.passwordCredential.findMany({
    where: { normalizedEmail: normaliseEmail(identifier) },
    orderBy: { createdAt: "asc" },
    take: 20,
  });
  return candidates.find((c) => c.emailConfirmedAt !== null) ?? candidates[0] ?? null;
}

/** As findCredential, for the password sign-in hot path: the same rule in one statement on the driver. */
export function findSignInCredential(store: SignInStore, identifier: string): Promise<SignInCredential | null> {
  return identifier.includes("@") ? store.credential(normaliseEmail(identifier), true) : store.credential(normaliseUserName(identifier), false);
}
