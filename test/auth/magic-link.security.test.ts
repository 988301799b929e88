// Attack: replaying or racing a sign-in link. A magic link (like a reset link) is a bearer
// credential: whoever presents it first signs in. An attacker who sees it (a shared mailbox, a
// proxy log, a browser prefetching the URL) races the owner or replays it later. Exactly one
// redemption may ever succeed, also when many arrive at the same moment, and a link mailed to an
// address the account no longer holds must not open the account. The same single-use property is
// checked for password-reset links, which share the token store's semantics.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { providers } from "../harness/databases.ts";
import { PASSWORD, startLifecycleApp, type LifecycleApp } from "./lifecycle-helpers.ts";

for (const provider of providers()) {
  describe(`single-use links under concurrent redemption (${provider})`, () => {
    let app: LifecycleApp;
    before(async () => {
      app = await startLifecycleApp(provider);
    });
    after(async () => {
      app.assertNoLeaks();
      await app.close();
    });

    test("a magic link redeemed by 10 concurrent requests signs in exactly once", async () => {
      await app.register("race", "race@example.com");
      const count = app.of("magicLink").length;
      assert.equal((await app.request("POST", "/auth/magic-link", { body: { email: "race@example.com" } })).status, 204);
      const { token } = await app.next("magicLink", count);
      const results = await Promise.all(Array.from({ length: 10 }, () => app.request("POST", "/auth/magic-link/verify", { body: { token } })));
      const statuses = results.map((r) => r.status).sort();
      assert.deepEqual(statuses, [200, ...Array<number>(9).fill(401)]);
      const sessions = await app.db.refreshFamily.count({ where: { user: { credential: { normalizedUserName: "race" } }, amr: { contains: "email" } } });
      assert.equal(sessions, 1);
    });

    test("a password-reset link redeemed by 10 concurrent requests applies exactly once", async () => {
      await app.register("reset-race", "reset-race@example.com");
      const count = app.of("passwordReset").length;
      assert.equal((await app.request("POST", "/auth/password/forgot", { body: { email: "reset-race@example.com" } })).status, 204);
      const { token } = await app.next("passwordReset", count);
      const passwords = Array.from({ length: 10 }, (_, i) => `new password number ${i} is long`);
      for (const p of passwords) app.secrets.add(p);
      const results = await Promise.all(passwords.map((newPassword) => app.request("POST", "/auth/password/reset", { body: { token, newPassword } })));
      const winners = results.flatMap((r, i) => (r.status === 204 ? [i] : []));
      assert.equal(winners.length, 1);
      assert.equal(results.filter((r) => r.status === 400).length, 9);
      const winner = passwords[winners[0] ?? -1] ?? "";
      assert.equal((await app.login("reset-race", winner)).status, 200, "the winner's password is the one set");
      assert.equal((await app.login("reset-race", PASSWORD)).status, 401);
    });

    test("a link mailed to an address the account has since lost no longer signs in", async () => {
      await app.register("typist", "shared@example.com");
      const count = app.of("magicLink").length;
      assert.equal((await app.request("POST", "/auth/magic-link", { body: { email: "shared@example.com" } })).status, 204);
      const stale = await app.next("magicLink", count);
      // The real owner proves the address: the typist's account loses it.
      const owner = await app.register("owner", "owner@example.com");
      assert.equal((await app.request("POST", "/auth/email", { token: owner.pair.access_token, body: { newEmail: "shared@example.com", currentPassword: PASSWORD } })).status, 204);
      assert.equal((await app.request("POST", "/auth/email/verify", { body: { token: app.of("emailVerification").at(-1)?.token } })).status, 204);
      const r = await app.request("POST", "/auth/magic-link/verify", { body: { token: stale.token } });
      assert.equal(r.status, 401);
    });

    test("a magic link issued before a password change, reset or admin set no longer signs in", async () => {
      const { pair } = await app.register("changer", "changer@example.com");
      const count = app.of("magicLink").length;
      assert.equal((await app.request("POST", "/auth/magic-link", { body: { email: "changer@example.com" } })).status, 204);
      const outstanding = await app.next("magicLink", count);
      const newPassword = "a brand new password for changer";
      app.secrets.add(newPassword);
      const changed = await app.request("POST", "/auth/password", { token: pair.access_token, body: { currentPassword: PASSWORD, newPassword } });
      assert.equal(changed.status, 204, changed.text);
      // Whoever changed the password shut every door the old one opened: a pending sign-in link too.
      assert.equal((await app.request("POST", "/auth/magic-link/verify", { body: { token: outstanding.token } })).status, 401);
    });

    test("a link of another kind is not a magic link", async () => {
      const { pair } = await app.register("kinds", "kinds@example.com");
      assert.equal((await app.request("POST", "/auth/email", { token: pair.access_token, body: { newEmail: "kinds2@example.com", currentPassword: PASSWORD } })).status, 204);
      const verification = app.of("emailVerification").at(-1)?.token;
      assert.equal((await app.request("POST", "/auth/magic-link/verify", { body: { token: verification } })).status, 401);
      assert.equal((await app.request("POST", "/auth/email/verify", { body: { token: verification } })).status, 204, "still unused for its own purpose");
    });
  });
}
