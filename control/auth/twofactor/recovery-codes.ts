/**
 * Recovery codes: ten single-use codes shown once at confirmation (and on regeneration). Only a
 * keyed hash is stored, HMAC-SHA256 under `LocalLogin:Pepper` (secret-keys.ts): each code carries
 * 49 random bits, far beyond what the challenge attempt cap, the account lockout and the rate
 * limit let anyone try online, so a slow hash buys nothing; but 49 bits can be searched offline
 * against a leaked table of plain hashes, which the pepper (kept out of the database) prevents.
 * Redemption is one conditional update on `usedAt: null` checked by row count: a code works once,
 * also under racing requests.
 */
import { randomInt } from "node:crypto";
import { randomUUID } from "node:crypto";
import type { TwoFactorKeys } from "./secret-keys.ts";
import type { Tx } from "./tx.ts";

export const RECOVERY_CODE_COUNT = 10;
/** decisions.md: recovery codes "run low" at 3 or fewer left. */
export const RUNNING_LOW_AT = 3;
/** Crockford-style alphabet without 0/O, 1/I/L, U: unambiguous when read off paper. */
const ALPHABET = "23456789abcdefghjkmnpqrstvwxyz";
/** 10 characters of a 30-letter alphabet: 49 bits per code. */
const CODE_LENGTH = 10;

export function normaliseRecoveryCode(code: string): string {
  return code.replace(/[\s-]/g, "").toLowerCase();
}

function newRecoveryCode(): string {
  let code = "";
  for (let i = 0; i < CODE_LENGTH; i++) code += ALPHABET[randomInt(ALPHABET.length)];
  return `${code.slice(0, 5)}-${code.slice(5)}`;
}

/** Replaces every code of the user (earlier ones stop working) and returns the new ones in the clear. */
export async function replaceRecoveryCodes(tx: Pick<Tx, "recoveryCode">, userId: string, now: Date, keys: TwoFactorKeys): Promise<string[]> {
  await tx.recoveryCode.deleteMany({ where: { userId } });
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  const data = codes.map((code) => ({ id: randomUUID(), userId, codeHash: keys.recoveryHash(normaliseRecoveryCode(code)), createdAt: now }));
  await tx.recoveryCode.createMany({ data });
  return codes;
}

/** Spends one unused code; false when it is unknown, foreign or already used. */
export async function redeemRecoveryCode(tx: Pick<Tx, "recoveryCode">, userId: string, code: string, now: Date, keys: TwoFactorKeys): Promise<boolean> {
  const normalised = normaliseRecoveryCode(code);
  if (normalised.length !== CODE_LENGTH) return false;
  // Every form the code may be stored in (current and retired peppers, pre-pepper SHA-256); at
  // most one row matches, and the update spends exactly that one.
  const candidates = keys.recoveryCandidates(normalised);
  const { count } = await tx.recoveryCode.updateMany({ where: { userId, codeHash: { in: candidates }, usedAt: null }, data: { usedAt: now } });
  return count === 1;
}

/**
 * `recovery_codes_running_low`: `true` at 3 or fewer unused codes, else `null` (never `false`).
 * A user who was never given codes (a passkey is their only second factor) is not running low:
 * new codes need a TOTP code, so the flag would ask for something they cannot do.
 */
export async function recoveryCodesRunningLow(db: Pick<Tx, "recoveryCode">, userId: string): Promise<true | null> {
  const left = await db.recoveryCode.count({ where: { userId, usedAt: null } });
  if (left > RUNNING_LOW_AT) return null;
  return left > 0 || (await db.recoveryCode.count({ where: { userId } })) > 0 ? true : null;
}
