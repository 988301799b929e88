// Attack: turning an invitation into more than one account, or into someone else's address. An
// invitation link is a bearer credential: racing completions must yield one account, never two,
// and completion only fills in the one reserved row the token names. Completing proves the
// address, so an account that merely typed that address (a squatter) loses it, exactly as at
// email verification. Two admins inviting one address at once must leave one reservation.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { providers } from "../harness/databases.ts";
import { PASSWORD, startLifecycleApp, type LifecycleApp } from "./lifecycle-helpers.ts";

const NEW_PASSWORD = "invited person passphrase";

for (const provider of providers()) {
  describe(`invitation security (${provider})`, () => {
    let app: LifecycleApp;
    let admin: string;
    before(async () => {
      app = await startLifecycleApp(provider);
      app.secrets.add(NEW_PASSWORD);
      admin = await app.adminToken();
    });
    after(async () => {
      app.assertNoLeaks();
      await app.close();
    });

    test("completion takes the address from an account that only typed it", async () => {
      const squatter = await app.register("squat", "invited@example.com");
      assert.equal((await app.request("POST", "/auth/invitations", { token: admin, body: { email: "invited@example.com" } })).status, 201);
      const token = app.of("invitation").at(-1)?.token;
      const r = await app.request("POST", "/auth/invitations/complete", { body: { token, userName: "rightful", password: NEW_PASSWORD } });
      assert.equal(r.status, 201, r.text);
      const cred = await app.db.passwordCredential.findUniqueOrThrow({ where: { userId: squatter.userId } });
      assert.equal(cred.email, null);
      assert.equal(cred.normalizedEmail, null);
      assert.equal((await app.login("invited@example.com", NEW_PASSWORD)).status, 200);
      assert.equal((await app.login("invited@example.com", PASSWORD)).status, 401, "the squatter no longer signs in by the address");
    });

    test("an address held verified elsewhere cannot be invited: 400 {errors} (the endpoint's answers are 201, 400, 403, 502)", async () => {
      const { pair } = await app.register("holder", "holder@example.com");
      assert.equal((await app.request("POST", "/auth/email", { token: pair.access_token, body: { newEmail: "holder@example.com", currentPassword: PASSWORD } })).status, 204);
      assert.equal((await app.request("POST", "/auth/email/verify", { body: { token: app.of("emailVerification").at(-1)?.token } })).status, 204);
      const before = await app.db.user.count();
      const r = await app.request("POST", "/auth/invitations", { token: admin, body: { email: "Holder@Example.com" } });
      assert.equal(r.status, 400, r.text);
      assert.deepEqual(r.body, { errors: ["Another account already uses this email address."] });
      assert.equal(await app.db.user.count(), before, "no reservation made");
    });

    test("concurrent completions of one link create exactly one account", async () => {
      assert.equal((await app.request("POST", "/auth/invitations", { token: admin, body: { email: "race@example.com" } })).status, 201);
      const token = app.of("invitation").at(-1)?.token;
      const before = await app.db.user.count();
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) => app.request("POST", "/auth/invitations/complete", { body: { token, userName: `racer${i}`, password: NEW_PASSWORD } })),
      );
      const statuses = results.map((r) => r.status);
      assert.equal(statuses.filter((s) => s === 201).length, 1, statuses.join());
      assert.equal(statuses.filter((s) => s === 400).length, 7, statuses.join());
      assert.equal(await app.db.user.count(), before, "no account beyond the reserved row");
      assert.equal(await app.db.passwordCredential.count({ where: { normalizedUserName: { startsWith: "racer" } } }), 1);
    });

    test("concurrent invitations of one address leave one reservation", async () => {
      const results = await Promise.all(Array.from({ length: 5 }, () => app.request("POST", "/auth/invitations", { token: admin, body: { email: "burst@example.com" } })));
      assert.deepEqual(results.map((r) => r.status), [201, 201, 201, 201, 201]);
      assert.equal(new Set(results.map((r) => (r.body as { userId: string }).userId)).size, 1);
      assert.equal(await app.db.user.count({ where: { reserved: true, email: "burst@example.com" } }), 1);
      const live = await app.db.singleUseToken.count({ where: { kind: "invitation", email: "burst@example.com", consumedAt: null, retiredAt: null } });
      assert.equal(live, 1, "only the newest link works");
    });
  });
}
