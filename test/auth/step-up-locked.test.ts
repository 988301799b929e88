/**
 * `/auth/2fa/step-up` on a locked account answers like its sibling code routes
 * (`/2fa/recovery-codes`, `DELETE /2fa`, `/2fa/totp/confirm`): 429 `{errors}` with `Retry-After`
 * (decisions.md 429 bodies). It answered 401 `invalid_grant`, which on a bearer route tells a
 * client its access token is dead, so clients signed the user out (audit F3).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { providers } from "../harness/databases.ts";
import { startAuthApp, type AuthTestApp, type TokenPair } from "./helpers.ts";
import { freshCode, registerEnrolled, signInWithCode } from "./twofactor-helpers.ts";

const LOCKED = { errors: ["Too many wrong codes. Try again later."] };

for (const provider of providers()) {
  describe(`step-up on a locked account (${provider})`, () => {
    let app: AuthTestApp;
    before(async () => {
      app = await startAuthApp(provider);
    });
    after(async () => {
      assert.deepEqual(app.logs.leaks(app.secrets), []);
      await app.close();
    });

    test("wrong codes lock the account; then step-up, like recovery-codes, answers 429 even to the right code", async () => {
      const user = await registerEnrolled(app, "Stella");
      const pair: TokenPair = await signInWithCode(app, user);
      const guesses = await Promise.all(
        Array.from({ length: 12 }, (_, i) => app.request("POST", "/auth/2fa/step-up", { token: pair.access_token, body: { code: String(100000 + i) } })),
      );
      for (const r of guesses) assert.ok(r.status === 400 || r.status === 429, `${r.status} ${r.text}`);
      assert.equal(guesses.filter((r) => r.status === 400).length, 5, "MaxFailedAttempts codes checked");

      for (const path of ["/auth/2fa/step-up", "/auth/2fa/recovery-codes"]) {
        const r = await app.request("POST", path, { token: pair.access_token, body: { code: freshCode(app, user.secret) } });
        assert.equal(r.status, 429, `${path}: ${r.text}`);
        assert.deepEqual(r.body, LOCKED, path);
        assert.equal(r.headers.get("retry-after"), String(15 * 60), path);
      }
    });
  });
}
