/**
 * The lockout counts a password check as a failure while it runs (it reserves before hashing, so
 * racing guesses cannot outrun the budget). A full budget of checks in flight is not a lock,
 * though: concurrent CORRECT sign-ins of one account (a shared account on several clients) were
 * refused as locked past the fifth, and a password change with the right current password while
 * apps signed in answered "Too many wrong passwords" (audit F2). Such a check now waits for the
 * checks in flight to settle. Parallel wrong guesses still get only the budget checked.
 */
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, describe, test } from "node:test";
import type { PasswordHasher } from "../../control/app/host.ts";
import { providers } from "../harness/databases.ts";
import { cheapHasher, PASSWORD, startAuthApp, type AuthTestApp } from "./helpers.ts";

/** Verifies slowly enough that every check of a burst is in flight at once. */
function slowHasher(): PasswordHasher {
  const inner = cheapHasher();
  return {
    hash: (password) => inner.hash(password),
    async verify(password, stored) {
      await sleep(150);
      return inner.verify(password, stored);
    },
  };
}

for (const provider of providers()) {
  describe(`lockout with checks in flight (${provider})`, () => {
    let app: AuthTestApp;
    before(async () => {
      app = await startAuthApp(provider, {}, slowHasher());
    });
    after(async () => {
      assert.deepEqual(app.logs.leaks(app.secrets), []);
      await app.close();
    });

    test("10 concurrent correct sign-ins of one account all get tokens", async () => {
      const { userId } = await app.register("shared", "shared@example.com");
      const results = await Promise.all(Array.from({ length: 10 }, () => app.login("shared", PASSWORD)));
      assert.deepEqual(
        results.map((r) => r.status),
        Array.from({ length: 10 }, () => 200),
        results.map((r) => r.text).join("\n"),
      );
      const credential = await app.db.passwordCredential.findUniqueOrThrow({ where: { userId } });
      assert.equal(credential.lockedUntil, null);
    });

    test("a password change with the right current password succeeds while sign-ins are in flight", async () => {
      const { userId, pair } = await app.register("busy", "busy@example.com");
      const signIns = Array.from({ length: 6 }, () => app.login("busy", PASSWORD));
      await sleep(20);
      const change = await app.request("POST", "/auth/password", { token: pair.access_token, body: { currentPassword: PASSWORD, newPassword: "a brand new password" } });
      app.secrets.add("a brand new password");
      assert.equal(change.status, 204, change.text);
      for (const r of await Promise.all(signIns)) assert.ok(r.status === 200 || r.status === 401, r.text);
      assert.equal((await app.login("busy", "a brand new password")).status, 200);
      assert.equal((await app.db.passwordCredential.findUniqueOrThrow({ where: { userId } })).lockedUntil, null);
    });

    test("20 concurrent wrong guesses and the right password last: the budget is checked, then all are refused", async () => {
      const { userId } = await app.register("target", "target@example.com");
      const attempts = [...Array.from({ length: 20 }, (_, i) => `wrong guess ${i}`), PASSWORD];
      const results = await Promise.all(attempts.map((p) => app.login("target", p)));
      // The right password waited for the wrong guesses in flight, which locked the account.
      assert.deepEqual(new Set(results.map((r) => r.status)), new Set([401]));
      const credential = await app.db.passwordCredential.findUniqueOrThrow({ where: { userId } });
      assert.equal(credential.failedCount, 5, "no check past MaxFailedAttempts was counted");
      assert.ok(credential.lockedUntil && credential.lockedUntil > app.clock.now(), "locked");
    });
  });
}
