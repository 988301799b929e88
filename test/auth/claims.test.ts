/**
 * Claims of locally issued access tokens (login-service.md "Claims of a locally issued access
 * token"): profile claims re-read on every issue, `email` only once verified, session claims
 * stable across refresh, `toa_2fa_required` under TwoFactor:Enforce; and asymmetric keys
 * published as a JWKS that verifies the tokens.
 */
import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from "jose";
import { providers } from "../harness/databases.ts";
import { decodePayload, startAuthApp, PASSWORD, type AuthTestApp, type TokenPair } from "./helpers.ts";

for (const provider of providers()) {
  describe(`access-token claims (${provider})`, () => {
    let app: AuthTestApp;
    before(async () => {
      app = await startAuthApp(provider, { Oidc: { ClientId: "recorder-ui" }, TwoFactor: { Enforce: true } });
    });
    after(async () => {
      assert.deepEqual(app.logs.leaks(app.secrets), []);
      await app.close();
    });

    test("the token pair has exactly the spec's fields and the token the spec's claims", async () => {
      const { userId } = await app.register("Claire", "claire@example.com");
      const r = await app.login("claire", PASSWORD);
      assert.equal(r.status, 200);
      const pair = r.body as TokenPair;
      assert.deepEqual(Object.keys(pair).sort(), ["access_token", "device_expires_in", "device_token", "expires_in", "recovery_codes_running_low", "refresh_token", "token_type"]);
      assert.equal(pair.token_type, "Bearer");
      assert.equal(pair.expires_in, 900);
      assert.equal(pair.recovery_codes_running_low, null);
      assert.equal(pair.device_token, null);
      assert.equal(pair.device_expires_in, null);
      assert.ok(Buffer.from(pair.refresh_token, "base64url").length >= 32, "refresh token carries >= 256 bits");

      const claims = decodePayload(pair.access_token);
      const family = await app.db.refreshFamily.findFirstOrThrow({ where: { userId }, orderBy: { createdAt: "desc" } });
      const user = await app.db.user.findUniqueOrThrow({ where: { id: userId } });
      assert.equal(claims.iss, "toamaisutaa");
      assert.equal(claims.aud, "recorder-ui", "audience defaults to Oidc:ClientId");
      assert.equal(claims.sub, userId);
      assert.equal(claims.preferred_username, "Claire");
      assert.equal(claims.name, "Claire", "no display name: the user name");
      assert.equal(claims.email, undefined, "an unverified address is not a claim");
      assert.deepEqual(claims.amr, ["pwd"]);
      assert.equal(claims.toa_sid, family.id);
      assert.equal(claims.toa_stamp, user.securityStamp);
      assert.equal(claims.toa_2fa_required, true, "Enforce without an enrolment");
      assert.equal(claims.toa_2fa_source, undefined);
      assert.equal((claims.exp as number) - (claims.iat as number), 900);
      assert.equal(typeof claims.jti, "string");
      assert.equal(typeof claims.auth_time, "number");

      // Verified address and a confirmed enrolment show at the next refresh, session claims stay.
      await app.db.passwordCredential.update({ where: { userId }, data: { emailConfirmedAt: new Date() } });
      await app.db.user.update({ where: { id: userId }, data: { name: "Claire Voyant" } });
      await app.db.totpEnrollment.create({ data: { userId, secret: "x", confirmedAt: new Date() } });
      const refreshed = await app.request("POST", "/auth/refresh", { body: { refreshToken: pair.refresh_token } });
      const next = decodePayload((refreshed.body as TokenPair).access_token);
      assert.equal(next.email, "claire@example.com");
      assert.equal(next.name, "Claire Voyant");
      assert.equal(next.toa_2fa_required, undefined);
      assert.equal(next.toa_sid, claims.toa_sid);
      assert.equal(next.auth_time, claims.auth_time);
      assert.notEqual(next.jti, claims.jti);
    });

    test("two-factor claims are carried from the session", async () => {
      const { userId, pair } = await app.register("twofa", "twofa@example.com");
      const sid = decodePayload(pair.access_token).toa_sid as string;
      const at = new Date(Math.floor(Date.now() / 1000) * 1000);
      await app.db.refreshFamily.update({ where: { id: sid }, data: { twoFactorSource: "otp", twoFactorAt: at, amr: JSON.stringify(["pwd", "otp", "mfa"]) } });
      const r = await app.request("POST", "/auth/refresh", { body: { refreshToken: pair.refresh_token } });
      const claims = decodePayload((r.body as TokenPair).access_token);
      assert.equal(claims.toa_2fa_source, "otp");
      assert.equal(claims.toa_2fa_at, at.getTime() / 1000);
      assert.deepEqual(claims.amr, ["pwd", "otp", "mfa"]);
      assert.ok(userId);
    });

    test("a local access token opens bearer routes", async () => {
      const { pair } = await app.register("bearer1", "bearer1@example.com");
      assert.equal((await app.request("GET", "/auth/sessions", { token: pair.access_token })).status, 200);
      assert.equal((await app.request("GET", "/auth/sessions")).status, 401);
    });
  });

  describe(`asymmetric signing keys (${provider})`, () => {
    let app: AuthTestApp;
    const es = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ format: "pem", type: "pkcs8" }).toString();
    const ed = { ...generateKeyPairSync("ed25519").privateKey.export({ format: "jwk" }), kid: "old-ed" };
    before(async () => {
      app = await startAuthApp(provider, { LocalLogin: { SigningKeys: [es, JSON.stringify(ed)], Audience: "api://recorder" } });
    });
    after(async () => {
      assert.deepEqual(app.logs.leaks([...app.secrets, es, String(ed.d)]), []);
      await app.close();
    });

    test("entry 0 signs (ES256, RFC 7638 kid); every key is published without private parts", async () => {
      const { pair } = await app.register("asym", "asym@example.com");
      const jwks = (await app.request("GET", "/auth/.well-known/jwks.json")).body as JSONWebKeySet;
      assert.equal(jwks.keys.length, 2);
      assert.ok(jwks.keys.every((k) => k.d === undefined));
      assert.deepEqual(jwks.keys.map((k) => k.alg), ["ES256", "EdDSA"]);
      const { payload, protectedHeader } = await jwtVerify(pair.access_token, createLocalJWKSet(jwks), { issuer: "toamaisutaa", audience: "api://recorder" });
      assert.equal(protectedHeader.alg, "ES256");
      assert.equal(protectedHeader.kid, jwks.keys[0]?.kid);
      assert.equal(payload.preferred_username, "asym");
    });
  });
}
