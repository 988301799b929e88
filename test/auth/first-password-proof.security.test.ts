/**
 * The fresh proof a first password needs (Account rule 3: `auth_time` or `toa_2fa_at` within
 * `FirstPasswordProofWindow`). `toa_2fa_at` is this service's own claim ("last live second factor
 * of ours"); an external provider's access token carrying a claim of that name proved nothing,
 * yet it was taken as the proof (audit F4), while the factor-change proof takes it only from local
 * tokens. And a window under a minute was worded "within 0 minutes" (audit F5).
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
  describe(`first-password proof from an external token (${provider})`, () => {
    let issuer: TestIssuer;
    let app: TestApp;
    const mailDir = mkdtempSync(join(tmpdir(), "toa-first-password-"));
    before(async () => {
      issuer = await startTestIssuer();
      app = await startTestApp({
        provider,
        features: [authFeature, probeFeature()],
        config: {
          LocalLogin: { FirstPasswordProofWindow: "00:00:15" },
          Oidc: { Authority: issuer.url, ClientId: issuer.audience, RequireHttpsMetadata: false },
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
    const setFirst = (token: string) => app.request("POST", "/auth/password", { token, body: { newPassword: FIRST_PASSWORD } });

    test("another issuer's toa_2fa_at is no proof; its access token's auth_time is", async () => {
      const claims = { sub: "ext-2fa", preferred_username: "ext2fa" };
      const withOurClaim = await setFirst(await issuer.sign({ ...claims, toa_2fa_at: now() }, { typ: "at+jwt" }));
      assert.equal(withOurClaim.status, 400, withOurClaim.text);
      const signedIn = await setFirst(await issuer.sign({ ...claims, auth_time: now() }, { typ: "at+jwt" }));
      assert.equal(signedIn.status, 204, signedIn.text);
    });

    test("a window under a minute is worded in seconds", async () => {
      const stale = await setFirst(await issuer.sign({ sub: "ext-stale", preferred_username: "extstale", auth_time: now() - 60 }, { typ: "at+jwt" }));
      assert.equal(stale.status, 400, stale.text);
      assert.deepEqual(stale.body, { errors: ["Sign in again to confirm it is you, then set the password within 15 seconds."] });
    });
  });
}
