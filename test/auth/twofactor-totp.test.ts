/**
 * TOTP against RFC 6238 Appendix B (SHA-1 seed "12345678901234567890"): the 8-digit reference
 * values via otpauth, and our 6-digit codes as their truncations (HOTP's value mod 10^6, RFC 4226
 * 5.3) matched to the right time step, with ±1 step tolerance and nothing beyond.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Secret, TOTP } from "otpauth";
import { matchTotpStep, otpauthUri } from "../../control/auth/twofactor/totp.ts";

const SEED = Secret.fromUTF8("12345678901234567890");
const VECTORS: [number, string][] = [
  [59, "94287082"],
  [1111111109, "07081804"],
  [1111111111, "14050471"],
  [1234567890, "89005924"],
  [2000000000, "69279037"],
  [20000000000, "65353130"],
];

describe("TOTP (RFC 6238 test vectors)", () => {
  test("8-digit reference values", () => {
    const totp = new TOTP({ secret: SEED, algorithm: "SHA1", digits: 8, period: 30 });
    for (const [seconds, expected] of VECTORS) assert.equal(totp.generate({ timestamp: seconds * 1000 }), expected, `T=${seconds}`);
  });

  test("6-digit truncations are accepted at their time and matched to their step", () => {
    for (const [seconds, expected] of VECTORS) {
      const code = expected.slice(-6);
      assert.equal(matchTotpStep(SEED.base32, code, new Date(seconds * 1000)), Math.floor(seconds / 30), `T=${seconds}`);
    }
  });

  test("±1 step is tolerated, 2 steps are not", () => {
    const [seconds, expected] = VECTORS[3] ?? [0, ""];
    const code = expected.slice(-6);
    const step = Math.floor(seconds / 30);
    assert.equal(matchTotpStep(SEED.base32, code, new Date((seconds + 30) * 1000)), step);
    assert.equal(matchTotpStep(SEED.base32, code, new Date((seconds - 30) * 1000)), step);
    assert.equal(matchTotpStep(SEED.base32, code, new Date((seconds + 60) * 1000)), null);
    assert.equal(matchTotpStep(SEED.base32, code, new Date((seconds - 60) * 1000)), null);
  });

  test("malformed codes never match", () => {
    for (const code of ["", "12345", "1234567", "abcdef", "89005924"]) assert.equal(matchTotpStep(SEED.base32, code, new Date(1234567890_000)), null, code);
    assert.equal(matchTotpStep(SEED.base32, "005 924", new Date(1234567890_000)), Math.floor(1234567890 / 30), "spaces are ignored");
  });

  test("the otpauth URI names SHA1, 6 digits and 30 s", () => {
    const uri = new URL(otpauthUri(SEED.base32, "Toamaisutaa", "alice"));
    assert.equal(uri.searchParams.get("issuer"), "Toamaisutaa");
    assert.equal(uri.searchParams.get("algorithm"), "SHA1");
    assert.equal(uri.searchParams.get("digits"), "6");
    assert.equal(uri.searchParams.get("period"), "30");
  });
});
