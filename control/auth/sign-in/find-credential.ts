/**
 * Which credential a login identifier names: a user name, or (containing `@`) an email address.
 * Several accounts may have typed one unproven address (Account rule 2), so an address prefers
 * the credential that proved it, then the oldest; an address nobody proved can still sign in.
 */
import type { SignInCredential, SignInStore } from "./sign-in-store.ts";

export const normaliseUserName = (userName: string): string => userName.trim().normalize("NFC").toLowerCase();
export const normaliseEmail = (email: string): string => email.trim().normalize("NFC").toLowerCase();

/** The credential a sign-in identifier names, for the password sign-in hot path, in one statement on the driver. */
export function findSignInCredential(store: SignInStore, identifier: string): Promise<SignInCredential | null> {
  return identifier.includes("@") ? store.credential(normaliseEmail(identifier), true) : store.credential(normaliseUserName(identifier), false);
}
