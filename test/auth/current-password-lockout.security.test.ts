/**
 * Attack: guess the password through a signed-in endpoint. A stolen access token reaches
 * `POST /auth/password` and `POST /auth/email`, which take the current password as proof; their
 * wrong answers did not count toward the account lockout, so the thief could test passwords
 * without limit (only the per-address rate limit, which many addresses defeat) and then use the
 * password to change it or the address. Every wrong current password now spends the same
 * per-account budget as a wrong sign-in, reserved before the hash is checked, so racing guesses
 * cannot outrun it; once locked, even the right password is refused there until the lock ends.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { providers } from "../harness/databases.ts";
import { PASSWORD, startAuthApp, type AuthTestApp } from "./helpers.ts";

const LOCKOUT_MS = 15 * 60_000;

for (const provider of providers()) {
  describe(`wrong current passwords count toward the lockout (${provider})`, () => {
    let app: AuthTestApp;
    before(async () => {
      app = await startAuthApp(provider);
    });
    after(async () => {
      assert.deepEqual(app.logs.leaks(app.secrets), []);
      await app.close();
    });

    const endpoints = [
      { name: "/auth/password", body: (currentPassword: string) => ({ currentPassword, newPassword: "the thief's new password" }) },
      { name: "/auth/email", body: (currentPassword: string) => ({ currentPassword, newEmail: "thief@example.com" }) },
    ];

    for (const endpoint of endpoints) {
      test(`${endpoint.name}: 20 racing wrong guesses check exactly MaxFailedAttempts, then the account is locked`, async () => {
        const userName = `victim${endpoint.name.replace(/\W/g, "")}`;
        const { userId, pair } = await app.register(userName, `${userName}@example.com`);
        const guesses = await Promise.all(
          Array.from({ length: 20 }, (_, i) => app.request("POST", endpoint.name, { token: pair.access_token, body: endpoint.body(`guess number ${i}`) })),
        );
        for (const g of guesses) {
          assert.equal(g.status, 400, g.text);
          assert.ok(Array.isArray((g.body as { errors?: unknown }).errors));
        }
        const credential = await app.db.passwordCredential.findUniqueOrThrow({ where: { userId } });
        assert.equal(credential.failedCount, 5, "exactly the budget was checked");
        assert.ok(credential.lockedUntil && credential.lockedUntil.getTime() > app.clock.now().getTime(), "locked");
        // Locked everywhere: the right password neither signs in nor passes as proof.
        assert.equal((await app.login(userName, PASSWORD)).status, 401);
        const right = await app.request("POST", endpoint.name, { token: pair.access_token, body: endpoint.body(PASSWORD) });
        assert.equal(right.status, 400);
        assert.equal((await app.db.passwordCredential.findUniqueOrThrow({ where: { userId } })).passwordHash, credential.passwordHash, "nothing changed");
        app.clock.advance(LOCKOUT_MS + 1000);
        assert.equal((await app.login(userName, PASSWORD)).status, 200, "the lock ends as any lockout does");
      });
    }
  });
}
