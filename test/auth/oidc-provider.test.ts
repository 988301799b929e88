// Attack: a resource server that only works against the provider its authors wrote. Here tokens
// come from panva's oidc-provider (discovery, JWKS, RS256 `at+jwt` access tokens): they are
// accepted and provisioned once under concurrent first use, roles come from the dotted
// `realm_access.roles` claim, and a token whose audience is another API's is refused.
import assert from "node:assert/strict";
import { describe, test, before, after } from "node:test";
import { startTestApp, type TestApp } from "../harness/app.ts";
import { providers } from "../harness/databases.ts";
import { startOidcProvider, type TestOidcProvider } from "../helpers/oidc/provider.ts";
import { probeFeature } from "../helpers/oidc/probe-feature.ts";

for (const provider of providers()) {
  describe(`tokens of oidc-provider (${provider})`, () => {
    let idp: TestOidcProvider;
    let other: TestOidcProvider;
    let app: TestApp;
    before(async () => {
      idp = await startOidcProvider({ audience: "toa-api", clients: [{ id: "svc-admin", roles: ["toa-admin"] }, { id: "svc-plain", roles: [] }] });
      other = await startOidcProvider({ audience: "another-api", clients: [{ id: "svc-admin", roles: ["toa-admin"] }] });
      app = await startTestApp({
        provider,
        features: [probeFeature()],
        config: { Oidc: { Authority: idp.url, ClientId: "toa-api", RequireHttpsMetadata: false, AdminRole: "toa-admin", RoleClaim: "realm_access.roles" } },
      });
    });
    after(async () => {
      await app.close();
      await idp.close();
      await other.close();
    });

    test("accepted, provisioned once under concurrent first use, roles from realm_access.roles", async () => {
      const token = await idp.tokenFor("svc-admin");
      const results = await Promise.all(Array.from({ length: 8 }, () => app.request("GET", "/auth/probe/admin", { token })));
      assert.deepEqual(results.map((r) => r.status), Array<number>(8).fill(200), results[0]?.text);
      const body = results[0]?.body as { userId: string; subject: string; roles: string[]; local: boolean };
      assert.equal(body.subject, "svc-admin");
      assert.equal(body.local, false);
      assert.deepEqual(body.roles, ["toa-admin"]);
      assert.equal(new Set(results.map((r) => (r.body as { userId: string }).userId)).size, 1);
      assert.equal(await app.server.database.db.user.count({ where: { externalIssuer: idp.url, externalSubject: "svc-admin" } }), 1);
    });

    test("without the role: authenticated but 403 on the admin policy", async () => {
      const token = await idp.tokenFor("svc-plain");
      assert.equal((await app.request("GET", "/auth/probe/me", { token })).status, 200);
      assert.equal((await app.request("GET", "/auth/probe/admin", { token })).status, 403);
    });

    test("a token of another provider, or for another API, is refused", async () => {
      const foreign = await other.tokenFor("svc-admin");
      assert.equal((await app.request("GET", "/auth/probe/me", { token: foreign })).status, 401);
    });
  });
}

test("a provider token minted for another audience is refused", async (t) => {
  const idp = await startOidcProvider({ audience: "another-api", clients: [{ id: "svc", roles: [] }] });
  t.after(() => idp.close());
  const app = await startTestApp({ features: [probeFeature()], config: { Oidc: { Authority: idp.url, ClientId: "toa-api", RequireHttpsMetadata: false } } });
  t.after(() => app.close());
  const res = await app.request("GET", "/auth/probe/me", { token: await idp.tokenFor("svc") });
  assert.equal(res.status, 401);
  assert.equal(await app.server.database.db.user.count(), 0);
});
