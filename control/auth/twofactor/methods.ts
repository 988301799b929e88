/**
 * RFC 8176 `amr` values each second factor adds. Every one adds `mfa`, so the
 * `Toamaisutaa.TwoFactor` policy holds for any of them (Authentication 4).
 * - otp: a one-time code (RFC 8176 "otp").
 * - recovery: a recovery code is a knowledge factor with no RFC 8176 name of its own; only `mfa`
 *   (login-service.md claims table).
 * - device: the cached second factor of a trusted device; only `mfa` (same table).
 * - passkey: proof of possession of a key in an authenticator: RFC 8176 "hwk". A synced passkey
 *   may live in software, but the WebAuthn assertion is what every relying party maps to `hwk`,
 *   and `toa_2fa_source` = "passkey" tells the precise source.
 */
export type SecondFactorSource = "otp" | "recovery" | "device" | "passkey";

export const METHODS: Readonly<Record<SecondFactorSource, readonly string[]>> = {
  otp: ["otp", "mfa"],
  recovery: ["mfa"],
  device: ["mfa"],
  passkey: ["hwk", "mfa"],
};
