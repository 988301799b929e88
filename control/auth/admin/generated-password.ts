/**
 * Passwords the service makes up for an admin (Account rules 10, 11): random base64url characters
 * from the CSPRNG, long enough to be unguessable and always inside the configured length range,
 * so the policy never refuses what the service itself generated.
 */
import { randomBytes } from "node:crypto";
import type { Config } from "../../config/index.ts";

/** 24 base64url characters = 144 bits: beyond any online or offline guessing budget. */
const PREFERRED_LENGTH = 24;

export function generatePassword(config: Config): string {
  const { MinimumPasswordLength: min, MaximumPasswordLength: max } = config.LocalLogin;
  const length = Math.min(max, Math.max(min, PREFERRED_LENGTH));
  return randomBytes(Math.ceil((length * 3) / 4) + 3)
    .toString("base64url")
    .slice(0, length);
}
