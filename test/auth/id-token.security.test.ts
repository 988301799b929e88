/**
 * Attack: an ID token used as an access token. A provider signs ID tokens and access tokens with
 * the same key, and an ID token's audience is the client id, which is often this API's audience
 * too; so an ID token (made for a browser app to read, and easily leaked from one) passed as a
 * bearer credential, and its `auth_time` counted as the fresh sign-in that Account rule 3 demands
 * before a first password is set. External tokens whose `typ` says ID token, or that carry
 * ID-token-only claims (`nonce`, `at_hash`, `c_hash`), are now refused unless
 * `Oidc:AcceptIdTokens` is on, and even then their `auth_time` proves nothing.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { authFeature } from "../../control/auth/feature.ts";
import { startTestApp, type TestApp } from "../harness/app.ts";
import { providers } from "../harness/databases.ts";
import { startTestIssuer, type TestIssuer } from "../helpers/oidc/issuer.ts";
import { probeFeature } from "../helpers/oidc/probe-feature.ts";

const FIRST_PASSWORD = "a first password for the api";

for (const provider of providers()) {
  for (const acceptIdTokens of [false, true]) {
    describe(`external ID tokens (${provider}, Oidc:AcceptIdTokens ${acceptIdTokens})`, () => {
      let issuer: TestIssuer;
      let app: TestApp;
      const mailDir = mkdtempSync(join(tmpdir(), "toa-id-token-"));
      before(async () => {
        issuer = await startTestIssuer();
        app = await startTestApp({
          provider,
          features: [authFeature, probeFeature()],
          config: {
            Oidc: { Authority: issuer.url, ClientId: issuer.audience, RequireHttpsMetadata: false, AcceptIdTokens: acceptIdTokens },
            Mail: { Transport: "file", File: { Directory: mailDir } },
          },
        });
      });
      after(async () => {
        await app.close();
        await issuer.close();
        rmSync(mailDir, { recursive: true, force: true });
      });

      const now = () => Math.floor(Date.now() / 1000);
      const idTokens = (sub: string) => [
        issuer.sign({ sub, nonce: "n-0S6_WzA2Mj" }),
        issuer.sign({ sub, at_hash: "77QmUPtjPfzWtF2AnpK9RQ" }),
        issuer.sign({ sub, c_hash: "LDktKdoQak3Pk0cnXxCltA" }),
        issuer.sign({ sub, typ: "ID" }),
        issuer.sign({ sub }, { typ: "id_token+jwt" }),
        // The header saying "ID" as Keycloak's payload does (audit F4: was accepted as an access token).
        issuer.sign({ sub }, { typ: "ID" }),
      ];

      test("ID tokens, also presented many at once, are refused unless accepted by configuration; access tokens pass", async () => {
        const sub = `id-${acceptIdTokens}`;
        const tokens = await Promise.all(idTokens(sub));
        const answers = await Promise.all(tokens.flatMap((token) => Array.from({ length: 4 }, () => app.request("GET", "/auth/probe/me", { token }))));
        const expected = acceptIdTokens ? 200 : 401;
        for (const r of answers) assert.equal(r.status, expected, r.text);
        const provisioned = await app.server.database.db.user.count({ where: { externalSubject: sub } });
        assert.equal(provisioned, acceptIdTokens ? 1 : 0, "a refused token provisions nobody");
        for (const token of [await issuer.sign({ sub: `access-${acceptIdTokens}` }, { typ: "at+jwt" }), await issuer.sign({ sub: `plain-${acceptIdTokens}`, typ: "Bearer" })]) {
          assert.equal((await app.request("GET", "/auth/probe/me", { token })).status, 200);
        }
      });

      test("auth_time proves a fresh sign-in for a first password only in an access token", async () => {
        const sub = `first-${acceptIdTokens}`;
        const idToken = await issuer.sign({ sub, preferred_username: `idt${acceptIdTokens}`, auth_time: now(), nonce: "abc" });
        const viaIdToken = await app.request("POST", "/auth/password", { token: idToken, body: { newPassword: FIRST_PASSWORD } });
        assert.equal(viaIdToken.status, acceptIdTokens ? 400 : 401, viaIdToken.text);
        const access = await issuer.sign({ sub, preferred_username: `idt${acceptIdTokens}`, auth_time: now() }, { typ: "at+jwt" });
        const viaAccess = await app.request("POST", "/auth/password", { token: access, body: { newPassword: FIRST_PASSWORD } });
        assert.equal(viaAccess.status, 204, viaAccess.text);
      });
    });
  }
}
