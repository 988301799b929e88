// Attack: forged or misdirected bearer tokens. A token from the external identity provider is
// accepted only when its signature verifies against the provider's published keys (found through
// discovery), its issuer and audience are ours, it has not expired, and its algorithm is an
// asymmetric one we allow: an unsigned token, an HS256 token "signed" with the provider's public
// key (algorithm confusion), a token for another client, another issuer's or an impostor's key
// are all refused with 401. First sight of a subject provisions exactly one User row, also when
// many first requests race.
import assert from "node:assert/strict";
import { describe, test, before, after } from "node:test";
import { parseConfig } from "../../control/config/index.ts";
import { ConfigError } from "../../control/config/index.ts";
import { createExternalVerifier } from "../../control/auth/bearer/external-verifier.ts";
import { startTestApp, type TestApp } from "../harness/app.ts";
import { providers } from "../harness/databases.ts";
import { captureLogs } from "../harness/logs.ts";
import { hmacWithPublicKey, startTestIssuer, unsignedToken, type TestIssuer } from "../helpers/oidc/issuer.ts";
import { probeFeature } from "../helpers/oidc/probe-feature.ts";

interface PrincipalBody {
  userId: string;
  local: boolean;
  issuer: string;
  subject: string;
  sessionId: string | null;
  amr: string[];
  roles: string[];
}

for (const provider of providers()) {
  describe(`external OIDC tokens (${provider})`, () => {
    let issuer: TestIssuer;
    let app: TestApp;
    const tokens: string[] = [];
    const sign = async (...args: Parameters<TestIssuer["sign"]>) => {
      const token = await issuer.sign(...args);
      tokens.push(token);
      return token;
    };

    before(async () => {
      issuer = await startTestIssuer();
      app = await startTestApp({
        provider,
        features: [probeFeature()],
        config: {
          Oidc: { Authority: issuer.url, ClientId: issuer.audience, RequireHttpsMetadata: false, AdminRole: "toa-admin", RoleClaim: "realm_access.roles" },
        },
      });
    });
    after(async () => {
      await app.close();
      await issuer.close();
    });

    test("a provider token is accepted and its subject provisioned with profile claims", async () => {
      const token = await sign({ sub: "alice-sub", preferred_username: "alice", email: "alice@example.com", name: "Alice A", amr: ["pwd", "mfa"], toa_sid: "not-ours" });
      const res = await app.request("GET", "/auth/probe/me", { token });
      assert.equal(res.status, 200, res.text);
      const body = res.body as PrincipalBody;
      assert.equal(body.local, false);
      assert.equal(body.issuer, issuer.url);
      assert.equal(body.subject, "alice-sub");
      assert.deepEqual(body.amr, ["pwd", "mfa"]);
      assert.equal(body.sessionId, null, "an external toa_sid names no session of ours");
      assert.ok(issuer.jwksFetches() >= 1, "keys came from the JWKS named by discovery");

      const user = await app.server.database.db.user.findUnique({ where: { id: body.userId } });
      assert.ok(user);
      assert.equal(user.externalIssuer, issuer.url);
      assert.equal(user.externalSubject, "alice-sub");
      assert.equal(user.externalHandle, "alice");
      assert.equal(user.email, "alice@example.com");
      assert.equal(user.name, "Alice A");

      // The same subject again maps to the same row; a changed profile claim is written through.
      const again = await app.request("GET", "/auth/probe/me", { token: await sign({ sub: "alice-sub", preferred_username: "alice", email: "alice@new.example.com" }) });
      assert.equal((again.body as PrincipalBody).userId, body.userId);
      const updated = await app.server.database.db.user.findUnique({ where: { id: body.userId } });
      assert.equal(updated?.email, "alice@new.example.com");
      assert.equal(updated?.name, "Alice A");
    });

    test("ES256 tokens of the provider are accepted too", async () => {
      const res = await app.request("GET", "/auth/probe/me", { token: await sign({ sub: "ec-sub" }, { alg: "ES256" }) });
      assert.equal(res.status, 200, res.text);
    });

    test("Oidc:ClockSkew (30 s) tolerates a token just past exp, not one well past it", async () => {
      const now = Math.floor(Date.now() / 1000);
      const within = await sign({ sub: "skew", iat: now - 600, exp: now - 10 });
      const beyond = await sign({ sub: "skew", iat: now - 600, exp: now - 90 });
      assert.equal((await app.request("GET", "/auth/probe/me", { token: within })).status, 200);
      assert.equal((await app.request("GET", "/auth/probe/me", { token: beyond })).status, 401);
    });

    test("concurrent first requests of a new subject create exactly one row", async () => {
      const token = await sign({ sub: "racer", preferred_username: "racer" });
      const results = await Promise.all(Array.from({ length: 12 }, () => app.request("GET", "/auth/probe/me", { token })));
      assert.deepEqual(results.map((r) => r.status), Array<number>(12).fill(200));
      const ids = new Set(results.map((r) => (r.body as PrincipalBody).userId));
      assert.equal(ids.size, 1);
      const rows = await app.server.database.db.user.count({ where: { externalIssuer: issuer.url, externalSubject: "racer" } });
      assert.equal(rows, 1);
    });

    test("refused tokens answer 401 invalid_token and provision nothing", async () => {
      const now = Math.floor(Date.now() / 1000);
      const payload = { iss: issuer.url, aud: issuer.audience, sub: "mallory", iat: now, exp: now + 300 };
      const cases: [string, string][] = [
        ["wrong audience", await sign({ sub: "mallory", aud: "another-client" })],
        ["wrong issuer", await sign({ sub: "mallory", iss: "http://127.0.0.1:1" })],
        ["issuer of ours but other host path", await sign({ sub: "mallory", iss: `${issuer.url}/evil` })],
        ["expired beyond the clock skew", await sign({ sub: "mallory", iat: now - 600, exp: now - 120 })],
        ["no exp", await sign({ sub: "mallory", exp: undefined })],
        ["alg none", unsignedToken(payload)],
        ["HS256 with the public key PEM as secret", hmacWithPublicKey(payload, issuer.rsaPublicPem, "rsa-1")],
        ["HS256 without kid", hmacWithPublicKey(payload, issuer.rsaPublicPem)],
        ["impostor key under the provider's kid", await sign({ sub: "mallory" }, { key: issuer.foreignKey, kid: "rsa-1" })],
        ["impostor key under an unknown kid", await sign({ sub: "mallory" }, { key: issuer.foreignKey, kid: "nope" })],
        ["tampered payload", tamper(await sign({ sub: "mallory" }))],
        ["not a JWT", "definitely-not-a-jwt"],
      ];
      for (const [name, token] of cases) {
        const res = await app.request("GET", "/auth/probe/me", { token });
        assert.equal(res.status, 401, `${name}: ${res.text}`);
        assert.deepEqual(res.body, { error: "invalid_token", error_description: "A valid bearer token is required." }, name);
        assert.match(res.headers.get("www-authenticate") ?? "", /^Bearer/, name);
      }
      assert.equal(await app.server.database.db.user.count({ where: { externalSubject: "mallory" } }), 0);
    });

    test("a missing or malformed Authorization header answers 401", async () => {
      assert.equal((await app.request("GET", "/auth/probe/me")).status, 401);
      assert.equal((await app.request("GET", "/auth/probe/me", { headers: { authorization: "Basic YTpi" } })).status, 401);
      assert.equal((await app.request("GET", "/auth/probe/me", { headers: { authorization: "Bearer" } })).status, 401);
    });

    test("admin policy reads roles from the dotted RoleClaim", async () => {
      const admin = await sign({ sub: "boss", realm_access: { roles: ["toa-admin", "other"] } });
      const single = await sign({ sub: "boss2", realm_access: { roles: "toa-admin" } });
      const plain = await sign({ sub: "worker", realm_access: { roles: ["other"] } });
      const topLevel = await sign({ sub: "worker2", roles: ["toa-admin"] });
      const ok = await app.request("GET", "/auth/probe/admin", { token: admin });
      assert.equal(ok.status, 200, ok.text);
      assert.deepEqual((ok.body as PrincipalBody).roles, ["toa-admin", "other"]);
      assert.equal((await app.request("GET", "/auth/probe/admin", { token: single })).status, 200);
      for (const token of [plain, topLevel]) {
        const res = await app.request("GET", "/auth/probe/admin", { token });
        assert.equal(res.status, 403);
        assert.equal((res.body as { error: string }).error, "forbidden");
        assert.equal(typeof (res.body as { error_description: unknown }).error_description, "string");
      }
      assert.equal((await app.request("GET", "/auth/probe/admin")).status, 401);
    });

    test("no token or key material reaches a log line", () => {
      assert.deepEqual(app.logs.leaks(tokens.map((t) => t.split(".")[2] ?? t)), []);
    });
  });
}

describe("external provider configuration is checked at startup", () => {
  const logger = captureLogs().logger;
  const base = { LocalLogin: { SigningKey: Buffer.alloc(32, 1).toString("base64") } };
  const check = (oidc: Record<string, string | string[] | boolean>) => () => createExternalVerifier(parseConfig({ ...base, Oidc: oidc }), logger);

  test("HMAC or none in Oidc:Algorithms is refused", () => {
    for (const alg of ["HS256", "none", "hs512"]) {
      assert.throws(check({ Authority: "https://idp.example.com", ClientId: "x", Algorithms: ["RS256", alg] }), (e: unknown) => e instanceof ConfigError && e.message.includes("Oidc:Algorithms"));
    }
  });
  test("an http authority needs RequireHttpsMetadata=false", () => {
    assert.throws(check({ Authority: "http://idp.example.com", ClientId: "x" }), (e: unknown) => e instanceof ConfigError && e.message.includes("https"));
    assert.ok(check({ Authority: "http://127.0.0.1:1", ClientId: "x", RequireHttpsMetadata: false })());
  });
  test("an authority without an audience is refused", () => {
    assert.throws(check({ Authority: "https://idp.example.com" }), (e: unknown) => e instanceof ConfigError && e.message.includes("Oidc:Audience"));
  });
  test("no authority: no external verifier", () => {
    assert.equal(check({})(), null);
  });
});

test("a discovery document naming another issuer is not trusted", async (t) => {
  // OIDC Discovery 4.3: the document must name the authority we asked; a provider that claims to
  // be someone else gets none of its tokens accepted (and keys are never fetched).
  const issuer = await startTestIssuer({ advertisedIssuer: "https://idp.example.com" });
  t.after(() => issuer.close());
  const app = await startTestApp({ features: [probeFeature()], config: { Oidc: { Authority: issuer.url, ClientId: issuer.audience, RequireHttpsMetadata: false } } });
  t.after(() => app.close());
  const res = await app.request("GET", "/auth/probe/me", { token: await issuer.sign() });
  assert.equal(res.status, 401);
  assert.equal(issuer.jwksFetches(), 0);
  assert.ok(app.logs.lines.some((l) => l.includes("identity provider discovery failed")));
});

test("a provider that is down gives 401, and is asked again once it is back", async (t) => {
  const issuer = await startTestIssuer();
  t.after(() => issuer.close());
  const app = await startTestApp({ features: [probeFeature()], config: { Oidc: { Authority: `${issuer.url}/missing`, ClientId: issuer.audience, RequireHttpsMetadata: false } } });
  t.after(() => app.close());
  const res = await app.request("GET", "/auth/probe/me", { token: await issuer.sign({ iss: `${issuer.url}/missing` }) });
  assert.equal(res.status, 401);
  const again = await app.request("GET", "/auth/probe/me", { token: await issuer.sign({ iss: `${issuer.url}/missing` }) });
  assert.equal(again.status, 401);
  // Each request retried discovery instead of caching the failure.
  assert.equal(app.logs.lines.filter((l) => l.includes("identity provider discovery failed")).length, 2);
});

function tamper(token: string): string {
  const [h, p, s] = token.split(".");
  const payload = JSON.parse(Buffer.from(p ?? "", "base64url").toString()) as Record<string, unknown>;
  payload.sub = "someone-else";
  return `${h}.${Buffer.from(JSON.stringify(payload)).toString("base64url")}.${s}`;
}
