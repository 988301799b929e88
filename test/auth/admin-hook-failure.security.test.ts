// Attack: an account is compromised and an administrator resets its password to lock the
// intruder out, but mail delivery fails. If the failure undid (or preceded) the revocation, the
// intruder's sessions, trusted devices and passkeys would survive; if a generated password were
// echoed in the 502 (or a log line) to "help", it would leak to whoever reads responses or logs.
// So: revocation happens before the hook, a hook failure answers 502 notification_failed with the
// new password set and everything still revoked, and a generated password is simply lost. The
// concurrency case: several admins resetting at once all revoke, and the account ends with one
// of the issued passwords, never a mix.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { providers } from "../harness/databases.ts";
import { PASSWORD, startLifecycleApp, type LifecycleApp } from "./lifecycle-helpers.ts";

for (const provider of providers()) {
  describe(`admin hook failures (${provider})`, () => {
    let app: LifecycleApp;
    let admin: string;
    before(async () => {
      app = await startLifecycleApp(provider);
      admin = await app.adminToken();
    });
    after(async () => {
      app.assertNoLeaks();
      await app.close();
    });

    test("set password: 502, password set, every session, device and passkey revoked, generated password nowhere", async () => {
      const { userId, pair } = await app.register("victim", "victim@example.com");
      const second = await app.login("victim", PASSWORD);
      assert.equal(second.status, 200);
      const stamp = (await app.db.user.findUniqueOrThrow({ where: { id: userId } })).securityStamp;
      app.failing.add("adminPasswordIssued");
      try {
        const r = await app.request("POST", `/auth/users/${userId}/password`, { token: admin, body: {} });
        assert.equal(r.status, 502, r.text);
        const body = r.body as { error: string; error_description: string };
        assert.equal(body.error, "notification_failed");
        assert.equal(typeof body.error_description, "string");
        const issued = app.of("adminPasswordIssued").at(-1)?.password;
        assert.ok(issued);
        assert.ok(!r.text.includes(issued), "the lost password is not in the 502");
        assert.equal((await app.request("POST", "/auth/refresh", { body: { refreshToken: pair.refresh_token } })).status, 401);
        assert.equal((await app.request("POST", "/auth/refresh", { body: { refreshToken: (second.body as { refresh_token: string }).refresh_token } })).status, 401);
        assert.equal(await app.db.refreshFamily.count({ where: { userId, revokedAt: null } }), 0);
        assert.notEqual((await app.db.user.findUniqueOrThrow({ where: { id: userId } })).securityStamp, stamp);
        assert.equal((await app.login("victim", PASSWORD)).status, 401, "the old password is gone");
        const stored = JSON.stringify(await app.db.passwordCredential.findUniqueOrThrow({ where: { userId } }));
        assert.ok(!stored.includes(issued), "only a hash is stored");
      } finally {
        app.failing.delete("adminPasswordIssued");
      }
    });

    test("create: 502 with the account kept; a new password can then be set and delivered", async () => {
      app.failing.add("adminPasswordIssued");
      const r = await app.request("POST", "/auth/users", { token: admin, body: { userName: "unlucky", email: "unlucky@example.com" } });
      app.failing.delete("adminPasswordIssued");
      assert.equal(r.status, 502, r.text);
      assert.equal((r.body as { error: string }).error, "notification_failed");
      const cred = await app.db.passwordCredential.findUniqueOrThrow({ where: { normalizedUserName: "unlucky" } });
      const retry = await app.request("POST", `/auth/users/${cred.userId}/password`, { token: admin, body: {} });
      assert.equal(retry.status, 204);
      assert.equal((await app.login("unlucky", app.of("adminPasswordIssued").at(-1)?.password ?? "")).status, 200);
    });

    test("concurrent admin resets: all revoke, the account ends with exactly one issued password", async () => {
      const { userId, pair } = await app.register("contested", "contested@example.com");
      const count = app.of("adminPasswordIssued").length;
      const results = await Promise.all(Array.from({ length: 5 }, () => app.request("POST", `/auth/users/${userId}/password`, { token: admin, body: {} })));
      assert.deepEqual(results.map((r) => r.status), [204, 204, 204, 204, 204]);
      const issued = app.of("adminPasswordIssued").slice(count).map((m) => m.password ?? "");
      assert.equal(issued.length, 5);
      let working = 0;
      for (const p of issued) if ((await app.login("contested", p)).status === 200) working += 1;
      assert.equal(working, 1);
      assert.equal((await app.request("POST", "/auth/refresh", { body: { refreshToken: pair.refresh_token } })).status, 401);
    });
  });
}
