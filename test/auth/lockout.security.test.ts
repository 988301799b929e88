/**
 * Attacks: online password guessing and account enumeration. Per-account lockout caps guesses
 * (50 parallel guesses may not buy more than MaxFailedAttempts verifications, nor slip a guess
 * past the lock); every refusal has one body and takes at least SignInRefusalFloor, so neither
 * the answer nor its timing tells "no such account" from "wrong password" from "locked".
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { providers } from "../harness/databases.ts";
import { startAuthApp, PASSWORD, type AuthTestApp } from "./helpers.ts";

const REFUSAL = { error: "invalid_grant", error_description: "The credentials were not accepted." };
const FLOOR_MS = 400;

for (const provider of providers()) {
  describe(`lockout and refusal floor (${provider})`, () => {
    let app: AuthTestApp;
    before(async () => {
      app = await startAuthApp(provider, { LocalLogin: { SignInRefusalFloor: "00:00:00.4" } });
    });
    after(async () => {
      assert.deepEqual(app.logs.leaks(app.secrets), []);
      await app.close();
    });

    test("50 concurrent wrong guesses count exactly to the threshold; the right password is then refused alike", async () => {
      const { userId } = await app.register("victim", "victim@example.com");
      const guesses = await Promise.all(Array.from({ length: 50 }, (_, i) => app.login("victim", `wrong guess ${i}`)));
      assert.deepEqual(new Set(guesses.map((r) => r.status)), new Set([401]));
      for (const g of guesses) assert.deepEqual(g.body, REFUSAL);
      const cred = await app.db.passwordCredential.findUniqueOrThrow({ where: { userId } });
      assert.equal(cred.failedCount, 5, "no count past MaxFailedAttempts");
      assert.ok(cred.lockedUntil && cred.lockedUntil.getTime() > Date.now());

      const locked = await app.login("victim", PASSWORD);
      assert.equal(locked.status, 401);
      assert.deepEqual(locked.body, REFUSAL);

      app.clock.advance(15 * 60_000 + 1000);
      assert.equal((await app.login("victim", PASSWORD)).status, 200, "unlocked after LockoutDuration");
    });

    test("a correct password racing 49 wrong ones gets at most the budget of verifications", async () => {
      const { userId } = await app.register("victim2", "victim2@example.com");
      const attempts = Array.from({ length: 50 }, (_, i) => (i === 25 ? PASSWORD : `nope ${i}`));
      const results = await Promise.all(attempts.map((p) => app.login("victim2", p)));
      assert.ok(results.filter((r) => r.status === 200).length <= 1);
      const cred = await app.db.passwordCredential.findUniqueOrThrow({ where: { userId } });
      assert.ok(cred.failedCount <= 5);
    });

    test("refusals take at least the floor: unknown user, wrong password, locked", async () => {
      await app.register("timing", "timing@example.com");
      const time = async (identifier: string, password: string) => {
        const started = performance.now();
        const r = await app.login(identifier, password);
        assert.equal(r.status, 401);
        assert.deepEqual(r.body, REFUSAL);
        return performance.now() - started;
      };
      assert.ok((await time("nobody-at-all", "whatever pw")) >= FLOOR_MS);
      assert.ok((await time("nobody@example.com", "whatever pw")) >= FLOOR_MS);
      for (let i = 0; i < 5; i += 1) assert.ok((await time("timing", `wrong ${i}`)) >= FLOOR_MS);
      assert.ok((await time("timing", PASSWORD)) >= FLOOR_MS, "locked");
    });

    test("sign-in by email prefers the account that proved the address", async () => {
      await app.register("typo1", "shared@example.com", "first account password");
      const { userId } = await app.register("owner1", "shared@example.com", "second account password");
      await app.db.passwordCredential.update({ where: { userId }, data: { emailConfirmedAt: new Date() } });
      assert.equal((await app.login("SHARED@example.com", "second account password")).status, 200);
      assert.equal((await app.login("shared@example.com", "first account password")).status, 401);
      assert.equal((await app.login("TYPO1", "first account password")).status, 200, "user names are case-insensitive");
    });
  });
}
