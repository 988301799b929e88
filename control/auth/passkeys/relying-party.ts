/**
 * The WebAuthn relying party from `Passkeys:*`. Assertions are checked against these origins and
 * this RP ID, so a passkey ceremony relayed through a look-alike site (phishing) fails: the
 * browser signs the origin it actually talked to.
 */
import type { AuthenticatorTransportFuture } from "@simplewebauthn/server";
import type { Config } from "../../config/index.ts";

export interface RelyingParty {
  rpID: string;
  rpName: string;
  origins: string[];
}

export function relyingParty(config: Config): RelyingParty {
  return { rpID: config.Passkeys.RpId, rpName: config.Passkeys.RpName, origins: [...config.Passkeys.Origins] };
}

/** Passkeys serve as a second factor; the password was the first. User presence suffices. */
export const USER_VERIFICATION = "preferred" as const;

const TRANSPORTS = new Set<string>(["ble", "cable", "hybrid", "internal", "nfc", "smart-card", "usb"]);

export function parseTransports(stored: string | null): AuthenticatorTransportFuture[] {
  if (!stored) return [];
  try {
    const value: unknown = JSON.parse(stored);
    return Array.isArray(value) ? value.filter((t): t is AuthenticatorTransportFuture => typeof t === "string" && TRANSPORTS.has(t)) : [];
  } catch {
    return [];
  }
}
