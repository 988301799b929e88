// Attack: forging or replaying local access tokens, and passing authorization policies without
// the proof they stand for. A local token is accepted only under the local key set's own
// algorithms (an HS256 token made with a published public key, or an unsigned one, is refused),
// with our issuer and audience, unexpired. Admin needs the configured role (from the host's role
// provider for local tokens); the two-factor policy needs `mfa`; the freshness policy needs a
// parseable `toa_2fa_at` younger than the window (login-service.md Account rule 16).
import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { describe, test, before, after } from "node:test";
import type { JWTPayload } from "jose";
import { isFresh, localAudience } from "../../control/auth/bearer/index.ts";
import { signingKeysFor } from "../../control/auth/tokens/keys.ts";
import type { Config } from "../../control/config/index.ts";
import { startTestApp, type TestApp } from "../harness/app.ts";
import { hmacWithPublicKey, startTestIssuer, unsignedToken, type TestIssuer } from "../helpers/oidc/issuer.ts";
import { probeFeature } from "../helpers/oidc/probe-feature.ts";

const nowSec = () => Math.floor(Date.now() / 1000);

async function localToken(config: Config, claims: JWTPayload = {}): Promise<string> {
  const keys = await signingKeysFor(config);
  const payload: JWTPayload = { iss: config.LocalLogin.Issuer, aud: localAudience(config), sub: "local-user-1", iat: nowSec(), exp: nowSec() + 600, ...claims };
  for (const key of Object.keys(payload)) if (payload[key] === undefined) delete payload[key];
  return keys.sign(payload);
}

describe("local tokens signed with LocalLogin:SigningKey (HS256)", () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp({
      features: [probeFeature()],
      config: { Oidc: { AdminRole: "toa-admin" } },
      host: { roleProvider: (userId: string) => (userId === "the-admin" ? ["toa-admin"] : []) },
    });
  });
  after(() => app.close());

  test("accepted, with session id and amr, and roles from the host's role provider", async () => {
    const token = await localToken(app.config, { toa_sid: "family-1", amr: ["pwd"] });
    const res = await app.request("GET", "/auth/probe/me", { token });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      { ...(res.body as Record<string, unknown>), claims: undefined },
      { userId: "local-user-1", local: true, issuer: "toamaisutaa", subject: "local-user-1", sessionId: "family-1", amr: ["pwd"], roles: [], accessToken: true, claims: undefined },
    );
    assert.equal((await app.request("GET", "/auth/probe/admin", { token })).status, 403);
    const admin = await localToken(app.config, { sub: "the-admin" });
    assert.equal((await app.request("GET", "/auth/probe/admin", { token: admin })).status, 200);
  });

  test("a role claim inside a local token grants nothing", async () => {
    // Only the host's role provider speaks for local subjects; a claim is not a role here.
    const token = await localToken(app.config, { roles: ["toa-admin"], realm_access: { roles: ["toa-admin"] } });
    assert.equal((await app.request("GET", "/auth/probe/admin", { token })).status, 403);
  });

  test("wrong audience, issuer, key, expiry or algorithm answers 401", async () => {
    const config = app.config;
    const good = { iss: config.LocalLogin.Issuer, aud: localAudience(config), sub: "x", iat: nowSec(), exp: nowSec() + 600 };
    const cases: [string, string][] = [
      ["wrong audience", await localToken(config, { aud: "someone-else" })],
      ["unknown issuer", await localToken(config, { iss: "not-toamaisutaa" })],
      ["expired", await localToken(config, { iat: nowSec() - 1200, exp: nowSec() - 60 })],
      ["no exp", await localToken(config, { exp: undefined })],
      ["no sub", await localToken(config, { sub: undefined })],
      ["alg none", unsignedToken(good)],
      ["HS256 with another secret", hmacWithPublicKey(good, "a-completely-different-secret-of-32-bytes!")],
    ];
    for (const [name, token] of cases) {
      const res = await app.request("GET", "/auth/probe/me", { token });
      assert.equal(res.status, 401, `${name}: ${res.text}`);
      assert.equal((res.body as { error: string }).error, "invalid_token");
    }
  });

  test("two-factor policy needs mfa in amr", async () => {
    const mfa = await localToken(app.config, { amr: ["pwd", "mfa"] });
    const pwd = await localToken(app.config, { amr: ["pwd"] });
    const none = await localToken(app.config);
    assert.equal((await app.request("GET", "/auth/probe/mfa", { token: mfa })).status, 200);
    for (const token of [pwd, none]) {
      const res = await app.request("GET", "/auth/probe/mfa", { token });
      assert.equal(res.status, 403);
      assert.equal((res.body as { error: string }).error, "forbidden");
    }
  });

  test("freshness policy: missing, unparseable, stale or far-future toa_2fa_at answers 403", async () => {
    const window = app.config.TwoFactor.FreshnessWindow / 1000;
    const cases: [string, unknown, number][] = [
      ["fresh number", nowSec() - 5, 200],
      ["fresh numeric string", String(nowSec() - 5), 200],
      ["missing", undefined, 403],
      ["unparseable", "yesterday", 403],
      ["empty string", "", 403],
      ["boolean", true, 403],
      ["array", [nowSec()], 403],
      ["just past the window", nowSec() - window - 1, 403],
      ["stale", nowSec() - 3600, 403],
      ["far future", nowSec() + 3600, 403],
    ];
    for (const [name, at, status] of cases) {
      const token = await localToken(app.config, { amr: ["pwd", "mfa"], toa_2fa_at: at as number });
      const res = await app.request("GET", "/auth/probe/fresh", { token });
      assert.equal(res.status, status, `${name}: ${res.text}`);
    }
    assert.equal((await app.request("GET", "/auth/probe/fresh")).status, 401);
  });

  test("JWKS is not mapped for an HS256 secret", async () => {
    assert.equal((await app.request("GET", "/auth/.well-known/jwks.json")).status, 404);
  });
});

test("isFresh edges", () => {
  const now = 1_700_000_000_000;
  assert.equal(isFresh(now / 1000 - 299, 300_000, now), true);
  assert.equal(isFresh(now / 1000 - 300, 300_000, now), false, "exactly the window is no longer younger than it");
  assert.equal(isFresh(" 1700000000 ", 300_000, now), true);
  assert.equal(isFresh("1e9", 300_000, now), false);
  assert.equal(isFresh(Number.NaN, 300_000, now), false);
  assert.equal(isFresh(null, 300_000, now), false);
});

describe("local tokens signed with LocalLogin:SigningKeys, beside an external provider", () => {
  let app: TestApp;
  let issuer: TestIssuer;
  const ec = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const jwk = { ...ec.privateKey.export({ format: "jwk" }), kid: "local-ec-1" };
  before(async () => {
    issuer = await startTestIssuer();
    app = await startTestApp({
      features: [probeFeature()],
      config: {
        LocalLogin: { SigningKeys: [JSON.stringify(jwk)] },
        Oidc: { Authority: issuer.url, ClientId: issuer.audience, RequireHttpsMetadata: false },
      },
    });
  });
  after(async () => {
    await app.close();
    await issuer.close();
  });

  test("JWKS publishes the public key only", async () => {
    const res = await app.request("GET", "/auth/.well-known/jwks.json");
    assert.equal(res.status, 200);
    const body = res.body as { keys: Record<string, unknown>[] };
    assert.equal(body.keys.length, 1);
    assert.equal(body.keys[0]?.kid, "local-ec-1");
    assert.equal(body.keys[0]?.alg, "ES256");
    assert.equal(body.keys[0]?.d, undefined, "no private part");
  });

  test("local and external tokens are both accepted and look alike", async () => {
    // With Oidc:ClientId set, local tokens default to it as audience too (Authentication 5).
    assert.equal(localAudience(app.config), issuer.audience);
    const local = await app.request("GET", "/auth/probe/me", { token: await localToken(app.config, { toa_sid: "fam" }) });
    const external = await app.request("GET", "/auth/probe/me", { token: await issuer.sign({ sub: "ext" }) });
    assert.equal(local.status, 200, local.text);
    assert.equal(external.status, 200, external.text);
    assert.deepEqual(Object.keys(local.body as object).sort(), Object.keys(external.body as object).sort());
    assert.equal((local.body as { local: boolean }).local, true);
    assert.equal((external.body as { local: boolean }).local, false);
  });

  test("forgeries against the published key are refused", async () => {
    const jwks = (await app.request("GET", "/auth/.well-known/jwks.json")).text;
    const publicPem = ec.publicKey.export({ format: "pem", type: "spki" }).toString();
    const claims = { iss: app.config.LocalLogin.Issuer, aud: localAudience(app.config), sub: "x", iat: nowSec(), exp: nowSec() + 600 };
    const cases: [string, string][] = [
      ["HS256 keyed with the public PEM", hmacWithPublicKey(claims, publicPem, "local-ec-1")],
      ["HS256 keyed with the JWKS document", hmacWithPublicKey(claims, jwks, "local-ec-1")],
      ["alg none", unsignedToken(claims)],
      ["the external provider's key claiming the local issuer", await issuer.sign({ iss: app.config.LocalLogin.Issuer, aud: localAudience(app.config) })],
      ["a local-looking token signed with an unrelated key", await issuer.sign({ iss: app.config.LocalLogin.Issuer, aud: localAudience(app.config) }, { key: issuer.foreignKey, kid: "local-ec-1" })],
    ];
    for (const [name, token] of cases) {
      assert.equal((await app.request("GET", "/auth/probe/me", { token })).status, 401, name);
    }
  });
});

test("the real auth feature maps the JWKS document under the endpoint prefix", async (t) => {
  const ec = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const app = await startTestApp({
    config: { LocalLogin: { SigningKeys: [JSON.stringify({ ...ec.privateKey.export({ format: "jwk" }), kid: "k1" })], EndpointPrefix: "/id" } },
    host: { hooks: { passwordReset: async () => {} } },
  });
  t.after(() => app.close());
  const res = await app.request("GET", "/id/.well-known/jwks.json");
  assert.equal(res.status, 200, res.text);
  assert.deepEqual((res.body as { keys: { kid: string }[] }).keys.map((k) => k.kid), ["k1"]);
  assert.equal(res.headers.get("cache-control"), "public, max-age=300");
  // The one cacheable auth document: none of the auth router's no-store headers.
  assert.equal(res.headers.get("pragma"), null);
});
