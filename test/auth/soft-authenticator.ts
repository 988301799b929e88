/**
 * A software WebAuthn authenticator (ES256, "none" attestation) for the security suites, which
 * need many ceremonies on both databases without a browser: it builds exactly the bytes a
 * platform authenticator sends (client data, authenticator data, DER ECDSA signature), so the
 * relying party's real verification (@simplewebauthn/server) runs unchanged. The browser suite
 * (passkeys.test.ts) covers real Chromium.
 */
import { createHash, createSign, generateKeyPairSync, randomBytes, type KeyObject } from "node:crypto";
import { isoCBOR } from "@simplewebauthn/server/helpers";

const b64u = (bytes: Uint8Array | Buffer): string => Buffer.from(bytes).toString("base64url");
const sha256 = (data: Uint8Array | string): Buffer => createHash("sha256").update(data).digest();

/** UP (user present) | UV (user verified). */
const FLAGS_ASSERT = 0x05;
/** UP | UV | AT (attested credential data follows). */
const FLAGS_ATTEST = 0x45;

export interface SoftPasskey {
  credentialId: string;
  /** The relying party's next options → the authenticator's JSON answer. */
  register(options: { challenge: string }): Record<string, unknown>;
  /** A signed assertion; `forge` signs with a key that is not the credential's (a bad signature). */
  assert(options: { challenge: string }, extra?: { forge?: boolean }): Record<string, unknown>;
}

export function softPasskey(origin: string, rpId: string): SoftPasskey {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const stranger = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey;
  const id = randomBytes(16);
  let counter = 0;
  const jwk = publicKey.export({ format: "jwk" });
  const cose = isoCBOR.encode(
    new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, Buffer.from(jwk.x ?? "", "base64url")],
      [-3, Buffer.from(jwk.y ?? "", "base64url")],
    ]),
  );
  const clientData = (type: string, challenge: string): Buffer => Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  const counterBytes = (): Buffer => {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(counter);
    return b;
  };
  const sign = (key: KeyObject, data: Buffer): Buffer => createSign("SHA256").update(data).sign(key);
  return {
    credentialId: b64u(id),
    register(options) {
      const idLength = Buffer.alloc(2);
      idLength.writeUInt16BE(id.length);
      const authData = Buffer.concat([sha256(rpId), Buffer.from([FLAGS_ATTEST]), counterBytes(), Buffer.alloc(16), idLength, id, Buffer.from(cose)]);
      const attestationObject = isoCBOR.encode(new Map<string, unknown>([["fmt", "none"], ["attStmt", new Map()], ["authData", authData]]) as never);
      return {
        id: b64u(id),
        rawId: b64u(id),
        type: "public-key",
        response: { clientDataJSON: b64u(clientData("webauthn.create", options.challenge)), attestationObject: b64u(attestationObject), transports: ["internal"] },
        clientExtensionResults: {},
      };
    },
    assert(options, extra = {}) {
      counter += 1;
      const authData = Buffer.concat([sha256(rpId), Buffer.from([FLAGS_ASSERT]), counterBytes()]);
      const data = clientData("webauthn.get", options.challenge);
      const signature = sign(extra.forge ? stranger : privateKey, Buffer.concat([authData, sha256(data)]));
      return {
        id: b64u(id),
        rawId: b64u(id),
        type: "public-key",
        response: { clientDataJSON: b64u(data), authenticatorData: b64u(authData), signature: b64u(signature) },
        clientExtensionResults: {},
      };
    },
  };
}
