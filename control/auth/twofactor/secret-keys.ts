/**
 * Keys that protect second-factor secrets at rest (issue #14 finding 6), built once per config:
 *
 * - TOTP secrets are sealed with AES-256-GCM under `TwoFactor:SecretKey` (version
 *   `TwoFactor:SecretKeyVersion`), bound to their user id as associated data so a row's secret
 *   cannot be moved to another user. Stored as `enc1$<version>$<iv>$<ciphertext>$<tag>`; older
 *   versions open with `TwoFactor:RetiredSecretKeys`, and startup re-seals every row under the
 *   current key (secret-rotation.ts), as a pepper rotation re-hashes passwords. A row written
 *   before encryption (a bare base32 secret) still opens and is sealed at the next start with a
 *   key. Without a key, secrets are stored as before (startup warns).
 * - Recovery codes are stored as HMAC-SHA256 under `LocalLogin:Pepper` (`h<version>$<hash>`), so a
 *   leaked table cannot be checked offline without the configuration. Codes stored before (plain
 *   SHA-256, no prefix) and under retired peppers still redeem: redemption looks for every form.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from "node:crypto";
import type { Config } from "../../config/index.ts";

const SEALED = "enc1";
const IV_BYTES = 12;

export interface TwoFactorKeys {
  /** The stored form of a TOTP secret (sealed when a key is configured). */
  seal(userId: string, secret: string): string;
  /** The secret of a stored value; null when it cannot be opened (unknown key version, tampering). */
  open(userId: string, stored: string): string | null;
  /** True when the stored value is not sealed under the current key. */
  needsReseal(stored: string): boolean;
  /** The stored form of a (normalised) recovery code, under the current pepper. */
  recoveryHash(normalised: string): string;
  /** Every stored form the code may have: current and retired peppers, and the legacy SHA-256. */
  recoveryCandidates(normalised: string): string[];
  /** Whether secrets are sealed at all (`TwoFactor:SecretKey` set). */
  sealing: boolean;
}

const cache = new WeakMap<Config, TwoFactorKeys>();

export function twoFactorKeys(config: Config): TwoFactorKeys {
  let keys = cache.get(config);
  if (!keys) cache.set(config, (keys = build(config)));
  return keys;
}

/** A secret key from configuration: base64 of exactly 32 bytes; null when it is not. */
export function decodeSecretKey(text: string): Buffer | null {
  const trimmed = text.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) return null;
  const bytes = Buffer.from(trimmed, "base64");
  return bytes.length === 32 ? bytes : null;
}

function build(config: Config): TwoFactorKeys {
  const tf = config.TwoFactor;
  const sealKeys = new Map<number, Buffer>();
  for (const [version, text] of Object.entries(tf.RetiredSecretKeys)) {
    const key = decodeSecretKey(text);
    if (key) sealKeys.set(Number(version), key);
  }
  const current = tf.SecretKey === undefined ? null : decodeSecretKey(tf.SecretKey);
  if (current) sealKeys.set(tf.SecretKeyVersion, current);
  const currentPrefix = `${SEALED}$${tf.SecretKeyVersion}$`;

  const ll = config.LocalLogin;
  const peppers = new Map<number, string>();
  for (const [version, secret] of Object.entries(ll.RetiredPeppers)) peppers.set(Number(version), secret);
  if (ll.Pepper !== undefined) peppers.set(ll.PepperVersion, ll.Pepper);
  const legacy = (code: string): string => createHash("sha256").update(code, "utf8").digest("base64url");
  const keyed = (version: number, pepper: string, code: string): string => `h${version}$${createHmac("sha256", pepper).update(code, "utf8").digest("base64url")}`;

  return {
    sealing: current !== null,
    seal(userId, secret) {
      if (!current) return secret;
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv("aes-256-gcm", current, iv);
      cipher.setAAD(Buffer.from(`totp:${userId}`, "utf8"));
      const body = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
      return [SEALED, tf.SecretKeyVersion, iv.toString("base64url"), body.toString("base64url"), cipher.getAuthTag().toString("base64url")].join("$");
    },
    open(userId, stored) {
      if (!stored.startsWith(`${SEALED}$`)) return stored;
      const [, version, iv, body, tag] = stored.split("$");
      const key = sealKeys.get(Number(version));
      if (!key || iv === undefined || body === undefined || tag === undefined) return null;
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
        decipher.setAAD(Buffer.from(`totp:${userId}`, "utf8"));
        decipher.setAuthTag(Buffer.from(tag, "base64url"));
        return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8");
      } catch {
        return null;
      }
    },
    needsReseal: (stored) => current !== null && !stored.startsWith(currentPrefix),
    recoveryHash(code) {
      return ll.Pepper === undefined ? legacy(code) : keyed(ll.PepperVersion, ll.Pepper, code);
    },
    recoveryCandidates(code) {
      return [legacy(code), ...[...peppers].map(([version, pepper]) => keyed(version, pepper, code))];
    },
  };
}
