/**
 * Signing keys of locally issued access tokens (login-service.md Authentication 5,
 * decisions.md Configuration): `LocalLogin:SigningKey` (HS256, base64 of at least 32 bytes) or
 * `LocalLogin:SigningKeys` (private keys as JWK JSON or PKCS#8 PEM; ES256, RS256, EdDSA). Entry 0
 * signs; every entry is published and verifies, so tokens in flight survive a key rotation.
 *
 * `algorithms` is the exact list a verifier must pass to jose.jwtVerify: pinning it stops the
 * algorithm-confusion attack (an HS256 token "signed" with a published public key, or `none`).
 */
import { createPrivateKey, createPublicKey, type KeyObject } from "node:crypto";
import { calculateJwkThumbprint, createLocalJWKSet, type JSONWebKeySet, type JWK, type JWTPayload, type JWTVerifyGetKey } from "jose";
import { ConfigError, type Config } from "../../config/index.ts";
import { signJws } from "./jws.ts";

export type SigningAlgorithm = "HS256" | "ES256" | "RS256" | "EdDSA";

export interface SigningKeySet {
  /** Algorithm of the active (signing) key. */
  alg: SigningAlgorithm;
  /** `kid` header of the active key; null for the single HS256 secret. */
  kid: string | null;
  /** Signs a JWT with the active key; the caller sets every claim (iss, aud, exp, ...). */
  sign(payload: JWTPayload): Promise<string>;
  /** Key (HS256 secret) or key resolver (published JWKS) for jose.jwtVerify. */
  verifyKey: Uint8Array | JWTVerifyGetKey;
  /** Algorithms a verifier accepts; pass as `algorithms` to jose.jwtVerify. */
  algorithms: SigningAlgorithm[];
  /** Public keys for `{prefix}/.well-known/jwks.json`; null for HS256 (nothing to publish). */
  jwks: JSONWebKeySet | null;
}

interface AsymmetricKey {
  alg: Exclude<SigningAlgorithm, "HS256">;
  kid: string;
  privateKey: KeyObject;
  publicJwk: JWK;
}

/** Minimum HS256 secret: RFC 7518 3.2 requires a key at least as long as the hash output. */
const MIN_HMAC_BYTES = 32;

export async function loadSigningKeys(config: Config): Promise<SigningKeySet> {
  const { SigningKey, SigningKeys } = config.LocalLogin;
  if (SigningKeys.length > 0) {
    const keys: AsymmetricKey[] = [];
    for (const [index, entry] of SigningKeys.entries()) keys.push(await loadAsymmetric(entry, index));
    const kids = new Set(keys.map((k) => k.kid));
    if (kids.size !== keys.length) {
      throw new ConfigError("LocalLogin:SigningKeys", "two entries have the same kid: give each key its own kid (or remove the duplicate key)");
    }
    const active = keys[0] as AsymmetricKey;
    const jwks: JSONWebKeySet = { keys: keys.map((k) => ({ ...k.publicJwk, kid: k.kid, alg: k.alg, use: "sig" })) };
    return {
      alg: active.alg,
      kid: active.kid,
      sign: async (payload) => signJws({ alg: active.alg, kid: active.kid, typ: "JWT" }, payload, active.privateKey),
      verifyKey: createLocalJWKSet(jwks),
      algorithms: [...new Set(keys.map((k) => k.alg))],
      jwks,
    };
  }
  if (SigningKey === undefined) {
    throw new ConfigError("LocalLogin:SigningKey", "set LocalLogin:SigningKey (base64, at least 32 bytes) or LocalLogin:SigningKeys");
  }
  const secret = new Uint8Array(Buffer.from(SigningKey, "base64"));
  if (secret.length < MIN_HMAC_BYTES) {
    throw new ConfigError("LocalLogin:SigningKey", "must be base64 of at least 32 bytes; generate one with `openssl rand -base64 32`");
  }
  return {
    alg: "HS256",
    kid: null,
    sign: async (payload) => signJws({ alg: "HS256", typ: "JWT" }, payload, secret),
    verifyKey: secret,
    algorithms: ["HS256"],
    jwks: null,
  };
}

async function loadAsymmetric(entry: string | Record<string, unknown>, index: number): Promise<AsymmetricKey> {
  const key = `LocalLogin:SigningKeys:${index}`;
  let privateKey: KeyObject;
  let givenKid: string | undefined;
  let givenAlg: string | undefined;
  try {
    const jwk = typeof entry === "string" && entry.trim().startsWith("{") ? (JSON.parse(entry) as Record<string, unknown>) : entry;
    if (typeof jwk === "string") {
      privateKey = createPrivateKey({ key: jwk.replace(/\\n/g, "\n"), format: "pem" });
    } else {
      if (typeof jwk.d !== "string") throw new Error("the JWK has no private part (d)");
      privateKey = createPrivateKey({ key: jwk as never, format: "jwk" });
      givenKid = typeof jwk.kid === "string" && jwk.kid !== "" ? jwk.kid : undefined;
      givenAlg = typeof jwk.alg === "string" ? jwk.alg : undefined;
    }
  } catch (error) {
    throw new ConfigError(key, `not a usable private key (${(error as Error).message}): give a private JWK (JSON) or a PKCS#8 PEM ("-----BEGIN PRIVATE KEY-----") of an ES256 (P-256), RS256 (RSA >= 2048 bits) or EdDSA (Ed25519) key`);
  }
  const alg = algorithmOf(privateKey, key);
  if (givenAlg !== undefined && givenAlg !== alg) {
    throw new ConfigError(key, `the JWK says alg ${givenAlg} but the key is a ${alg} key: fix or remove its "alg"`);
  }
  const publicJwk = createPublicKey(privateKey).export({ format: "jwk" }) as JWK;
  // RFC 7638 thumbprint: a stable kid derived from the public key when none was given.
  const kid = givenKid ?? (await calculateJwkThumbprint(publicJwk, "sha256"));
  return { alg, kid, privateKey, publicJwk };
}

function algorithmOf(key: KeyObject, name: string): AsymmetricKey["alg"] {
  const details = key.asymmetricKeyDetails ?? {};
  switch (key.asymmetricKeyType) {
    case "ec":
      if (details.namedCurve === "prime256v1" || details.namedCurve === "P-256") return "ES256";
      throw new ConfigError(name, `EC keys must use curve P-256 (ES256), got ${details.namedCurve ?? "unknown"}`);
    case "rsa":
      // NIST SP 800-57: RSA below 2048 bits no longer gives 112-bit security.
      if ((details.modulusLength ?? 0) < 2048) throw new ConfigError(name, "RSA keys must be at least 2048 bits");
      return "RS256";
    case "ed25519":
      return "EdDSA";
    default:
      throw new ConfigError(name, `key type ${key.asymmetricKeyType ?? "unknown"} is not supported: use ES256 (P-256), RS256 (RSA) or EdDSA (Ed25519)`);
  }
}

const cache = new WeakMap<Config, Promise<SigningKeySet>>();

/** The key set of a (frozen) configuration, loaded once and shared by every issuer. */
export function signingKeysFor(config: Config): Promise<SigningKeySet> {
  let keys = cache.get(config);
  if (!keys) {
    keys = loadSigningKeys(config);
    cache.set(config, keys);
  }
  return keys;
}
