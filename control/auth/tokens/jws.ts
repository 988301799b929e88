/**
 * Compact JWS signing (RFC 7515) with node:crypto's synchronous primitives.
 *
 * Why not jose's SignJWT: jose signs through WebCrypto, whose operations Node runs as jobs on the
 * libuv threadpool. During a login storm that pool is full of PBKDF2 hashes (hundreds of ms
 * each), so every token issue, refresh included, queued behind them: refresh p99 was seconds
 * (bench/auth.ts, "refresh during the login storm"). Signing one JWT takes microseconds (HS256,
 * EdDSA, ES256) to about a millisecond (RS256), cheaper on the event loop than the round trip.
 * Verification stays with jose (jwtVerify), which also pins the algorithm list.
 */
import { createHmac, sign, type KeyObject } from "node:crypto";
import type { JWTPayload } from "jose";
import type { SigningAlgorithm } from "./keys.ts";

const b64url = (data: string | Buffer): string => Buffer.from(data).toString("base64url");

function signature(alg: SigningAlgorithm, key: KeyObject | Uint8Array, input: string): Buffer {
  if (alg === "HS256") return createHmac("sha256", key as Uint8Array).update(input).digest();
  const privateKey = key as KeyObject;
  // RFC 7518 3.4: ES256 signatures are R || S (IEEE P1363), not DER.
  if (alg === "ES256") return sign("sha256", Buffer.from(input), { key: privateKey, dsaEncoding: "ieee-p1363" });
  // RS256 is RSASSA-PKCS1-v1_5 (the default padding of an RSA key); Ed25519 takes no digest.
  return sign(alg === "RS256" ? "sha256" : null, Buffer.from(input), privateKey);
}

export function signJws(header: { alg: SigningAlgorithm; kid?: string; typ: "JWT" }, payload: JWTPayload, key: KeyObject | Uint8Array): string {
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(payload))}`;
  return `${input}.${signature(header.alg, key, input).toString("base64url")}`;
}
