// Attack: address squatting and double claims. An attacker registers with the victim's address
// (never proving it), hoping to sign in by that address, receive its reset or magic-link mail,
// or block the victim from using it. When the victim proves the address, the attacker's account
// must lose it (credential Email and NormalizedEmail cleared), so mail for that address reaches
// only the victim's account. Two accounts proving one address at the same moment must not both
// end up holding it verified, and one verification link must apply once however many times it
// is redeemed concurrently.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { providers } from "../harness/databases.ts";
import { eventually, PASSWORD, startLifecycleApp, type LifecycleApp } from "./lifecycle-helpers.ts";

for (const provider of providers()) {
  describe(`email address takeover at verification (${provider})`, () => {
    let app: LifecycleApp;
    before(async () => {
      app = await startLifecycleApp(provider);
    });
    after(async () => {
      app.assertNoLeaks();
      await app.close();
    });

    const requestLink = async (token: string, newEmail: string): Promise<string> => {
      const r = await app.request("POST", "/auth/email", { token, body: { newEmail, currentPassword: PASSWORD } });
      assert.equal(r.status, 204, r.text);
      const t = app.of("emailVerification").at(-1)?.token;
      assert.ok(t);
      return t;
    };

    test("proving an address takes it from every account that only typed it", async () => {
      const squatter = await app.register("squatter", "victim@example.com");
      const squatter2 = await app.register("squatter2", "VICTIM@example.com");
      const victim = await app.register("victim", "victim-old@example.com");
      const link = await requestLink(victim.pair.access_token, "victim@example.com");
      assert.equal((await app.request("POST", "/auth/email/verify", { body: { token: link } })).status, 204);

      for (const id of [squatter.userId, squatter2.userId]) {
        const cred = await app.db.passwordCredential.findUniqueOrThrow({ where: { userId: id } });
        assert.equal(cred.email, null);
        assert.equal(cred.normalizedEmail, null);
      }
      // Signing in by the address now reaches the victim's account only.
      const login = await app.login("victim@example.com", PASSWORD);
      assert.equal(login.status, 200);
      // A reset for the address goes to the victim's account.
      const count = app.of("passwordReset").length;
      assert.equal((await app.request("POST", "/auth/password/forgot", { body: { email: "victim@example.com" } })).status, 204);
      await eventually(() => app.of("passwordReset").length > count, "the reset mail");
      assert.equal(app.of("passwordReset").at(-1)?.userId, victim.userId);
      // The squatter can no longer claim it either: the address is held verified.
      const again = await app.request("POST", "/auth/email", { token: squatter.pair.access_token, body: { newEmail: "victim@example.com", currentPassword: PASSWORD } });
      assert.equal(again.status, 409);
    });

    test("an address several accounts typed and none proved gets no reset or magic link until one proves it", async () => {
      const first = await app.register("typed-first", "shared@example.com");
      const owner = await app.register("typed-second", "Shared@example.com");
      const [resets, links] = [app.of("passwordReset").length, app.of("magicLink").length];
      assert.equal((await app.request("POST", "/auth/password/forgot", { body: { email: "shared@example.com" } })).status, 204);
      assert.equal((await app.request("POST", "/auth/magic-link", { body: { email: "shared@example.com" } })).status, 204);
      await app.settle();
      assert.equal(app.of("passwordReset").length, resets, "no reset link to whichever account typed it first");
      assert.equal(app.of("magicLink").length, links, "no magic link to whichever account typed it first");

      // The mailbox's owner signs in by name and proves it: the link now opens the owner's account.
      const link = await requestLink(owner.pair.access_token, "shared@example.com");
      assert.equal((await app.request("POST", "/auth/email/verify", { body: { token: link } })).status, 204);
      assert.equal((await app.request("POST", "/auth/magic-link", { body: { email: "shared@example.com" } })).status, 204);
      await eventually(() => app.of("magicLink").length > links, "the magic link");
      assert.equal(app.of("magicLink").at(-1)?.userId, owner.userId);
      assert.notEqual(owner.userId, first.userId);
    });

    test("two accounts proving one address concurrently: exactly one holds it", async () => {
      const a = await app.register("racer-a", "ra@example.com");
      const b = await app.register("racer-b", "rb@example.com");
      const linkA = await requestLink(a.pair.access_token, "prize@example.com");
      const linkB = await requestLink(b.pair.access_token, "prize@example.com");
      const results = await Promise.all([linkA, linkB].map((token) => app.request("POST", "/auth/email/verify", { body: { token } })));
      assert.deepEqual(results.map((r) => r.status).sort(), [204, 409]);
      const holders = await app.db.passwordCredential.count({ where: { normalizedEmail: "prize@example.com", emailConfirmedAt: { not: null } } });
      assert.equal(holders, 1);
    });

    test("one link redeemed concurrently applies exactly once", async () => {
      const c = await app.register("racer-c", "rc@example.com");
      const link = await requestLink(c.pair.access_token, "rc-new@example.com");
      const results = await Promise.all(Array.from({ length: 8 }, () => app.request("POST", "/auth/email/verify", { body: { token: link } })));
      const statuses = results.map((r) => r.status).sort();
      assert.deepEqual(statuses, [204, 400, 400, 400, 400, 400, 400, 400]);
      const row = await app.db.singleUseToken.findFirstOrThrow({ where: { userId: c.userId, kind: "email-verification" } });
      assert.ok(row.consumedAt);
    });
  });
}
