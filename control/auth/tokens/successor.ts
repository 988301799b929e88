/**
 * The refresh token that replaces a presented one. With `RefreshTokenReuseInterval` > 0 it is
 * derived from the presented token by HMAC under a server key, so a client that lost the response
 * (or raced itself) and retries within the interval can be handed the *same* live pair again by
 * any instance, although only hashes are stored. Without the interval it is plain random.
 * Knowing the key and an old token is needed to compute a successor; the key never leaves the
 * process (HKDF of the signing-key configuration, which is itself secret).
 */
import { createHmac, hkdfSync } from "node:crypto";
import type { Config } from "../../config/index.ts";
import { newOpaqueToken } from "./opaque.ts";

const keys = new WeakMap<Config, Buffer>();

function successorKey(config: Config): Buffer {
  let key = keys.get(config);
  if (!key) {
    const material = JSON.stringify([config.LocalLogin.SigningKey ?? null, config.LocalLogin.SigningKeys]);
    key = Buffer.from(hkdfSync("sha256", material, "", "toamaisutaa refresh-token successor v1", 32));
    keys.set(config, key);
  }
  return key;
}

export function successorToken(config: Config, presented: string): string {
  if (config.LocalLogin.RefreshTokenReuseInterval <= 0) return newOpaqueToken();
  return createHmac("sha256", successorKey(config)).update(presented, "utf8").digest("base64url");
}
