/**
 * A minimal OpenID provider on loopback for bearer tests: a real discovery document, a real JWKS
 * endpoint (fetches are counted) and tokens signed by jose with its RS256 and ES256 keys. Only the
 * part of a provider a resource server talks to; tests mint tokens directly instead of running
 * an authorization flow.
 */
import { createHmac } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from "jose";

export interface TestIssuer {
  /** The issuer (`Oidc:Authority`), `http://127.0.0.1:<port>`. */
  url: string;
  /** Audience the provider puts in tokens unless told otherwise. */
  audience: string;
  /** Number of JWKS downloads so far. */
  jwksFetches(): number;
  /** SPKI PEM of the RSA public key (published in the JWKS): the alg-confusion "secret". */
  rsaPublicPem: string;
  /** Signs with the provider's key; claims override the defaults (iss, aud, sub, iat, exp). */
  sign(claims?: JWTPayload, options?: { alg?: "RS256" | "ES256"; kid?: string; key?: CryptoKey; typ?: string }): Promise<string>;
  /** A key of the same kind the provider does not publish (an impostor's). */
  foreignKey: CryptoKey;
  close(): Promise<void>;
}

const b64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString("base64url");

export interface TestIssuerOptions {
  audience?: string;
  /** Issuer the discovery document claims, when it should lie about who it is. */
  advertisedIssuer?: string;
}

export async function startTestIssuer(options: TestIssuerOptions = {}): Promise<TestIssuer> {
  const rsa = await generateKeyPair("RS256", { extractable: true });
  const ec = await generateKeyPair("ES256", { extractable: true });
  const foreign = await generateKeyPair("RS256");
  const publicJwks: JWK[] = [
    { ...(await exportJWK(rsa.publicKey)), kid: "rsa-1", alg: "RS256", use: "sig" },
    { ...(await exportJWK(ec.publicKey)), kid: "ec-1", alg: "ES256", use: "sig" },
  ];
  let fetches = 0;
  let url = "";
  const server: Server = createServer((req, res) => {
    if (req.url === "/.well-known/openid-configuration") {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ issuer: options.advertisedIssuer ?? url, jwks_uri: `${url}/jwks`, id_token_signing_alg_values_supported: ["RS256", "ES256"] }));
    } else if (req.url === "/jwks") {
      fetches += 1;
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ keys: publicJwks }));
    } else {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const audience = options.audience ?? "toa-api";

  return {
    url,
    audience,
    jwksFetches: () => fetches,
    rsaPublicPem: await exportSPKI(rsa.publicKey),
    foreignKey: foreign.privateKey,
    async sign(claims = {}, opts = {}) {
      const alg = opts.alg ?? "RS256";
      const now = Math.floor(Date.now() / 1000);
      const payload: JWTPayload = { iss: url, aud: audience, sub: "ext-user-1", iat: now, exp: now + 300, ...claims };
      const key = opts.key ?? (alg === "RS256" ? rsa.privateKey : ec.privateKey);
      return new SignJWT(payload).setProtectedHeader({ alg, kid: opts.kid ?? (alg === "RS256" ? "rsa-1" : "ec-1"), typ: opts.typ ?? "JWT" }).sign(key);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** An unsigned token (`alg: none`): valid shape, no signature. */
export function unsignedToken(payload: JWTPayload): string {
  return `${b64url({ alg: "none", typ: "JWT" })}.${b64url(payload)}.`;
}

/**
 * The algorithm-confusion forgery: HS256 "signed" with the bytes of a published public key, which
 * a verifier that lets the token pick its algorithm would check with that same key as secret.
 */
export function hmacWithPublicKey(payload: JWTPayload, publicKeyBytes: string, kid?: string): string {
  const signingInput = `${b64url({ alg: "HS256", typ: "JWT", ...(kid ? { kid } : {}) })}.${b64url(payload)}`;
  const signature = createHmac("sha256", publicKeyBytes).update(signingInput).digest("base64url");
  return `${signingInput}.${signature}`;
}
