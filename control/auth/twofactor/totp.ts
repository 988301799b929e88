/**
 * TOTP as decisions.md fixes it: RFC 6238 with SHA-1, 6 digits, 30 s steps, and a code accepted
 * within ±1 step of the server clock (RFC 6238 section 5.2 recommends at most one step of
 * network delay). Pure functions only; the single-use rule (a code's step must be above the
 * highest accepted step) is the enrolment store's atomic update (enrolment.ts).
 */
import { Secret, TOTP } from "otpauth";

export const TOTP_PERIOD_SECONDS = 30;
export const TOTP_DIGITS = 6;
/** Steps either side of now: one step of clock drift or slow typing, no more (RFC 6238 5.2). */
export const TOTP_WINDOW = 1;
/** 160 bits: the HMAC-SHA-1 key length RFC 4226 section 4 recommends. */
const SECRET_BYTES = 20;

export function newTotpSecret(): string {
  return new Secret({ size: SECRET_BYTES }).base32;
}

export function totpFor(secret: string, issuer: string, label: string): TOTP {
  return new TOTP({
    issuer,
    label,
    algorithm: "SHA1",
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD_SECONDS,
    secret: Secret.fromBase32(secret),
  });
}

/** `otpauth://totp/...` for authenticator apps (Key Uri Format). */
export function otpauthUri(secret: string, issuer: string, label: string): string {
  return totpFor(secret, issuer, label).toString();
}

/** A code as people type it: spaces and dashes ignored ("123 456"). */
export function normaliseCode(code: string): string {
  return code.replace(/[\s-]/g, "");
}

export function looksLikeTotp(code: string): boolean {
  return new RegExp(`^\\d{${TOTP_DIGITS}}$`).test(normaliseCode(code));
}

/** The time step the code belongs to (within ±TOTP_WINDOW of `now`), or null when it matches none. */
export function matchTotpStep(secret: string, code: string, now: Date): number | null {
  const token = normaliseCode(code);
  if (!looksLikeTotp(token)) return null;
  const totp = totpFor(secret, "", "");
  const delta = totp.validate({ token, timestamp: now.getTime(), window: TOTP_WINDOW });
  if (delta === null) return null;
  return totp.counter({ timestamp: now.getTime() }) + delta;
}
