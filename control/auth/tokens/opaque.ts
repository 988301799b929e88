/**
 * Opaque secrets (refresh tokens, reset links): 32 random bytes = 256 bits, base64url, so guessing
 * one is hopeless; only their SHA-256 is stored, so a database leak hands out nothing usable.
 * A fast hash is right here (unlike passwords): the input already has full entropy.
 */
import { createHash, randomBytes } from "node:crypto";

/** 256 bits: the brief's floor, and beyond any online or offline guessing budget. */
const TOKEN_BYTES = 32;

export function newOpaqueToken(): string {
  return randomBytes(TOKEN_BYTES).toString("base64url");
}

export function hashToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("base64url");
}
