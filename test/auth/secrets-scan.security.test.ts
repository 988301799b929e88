// Attack: harvesting secrets from logs and responses. Reset, verification, magic-link and
// invitation tokens and generated passwords are live credentials; anyone who can read the
// service's logs (a log pipeline, a support engineer) or a response meant for someone else (an
// admin's 502, a proxy cache) must never find one. This suite drives every lifecycle flow, the
// failure paths included (hooks that throw, used links, 409s, concurrent redemptions), at debug
// log level, and then scans every log line and every response body for every secret a hook
// received.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { providers } from "../harness/databases.ts";
import { PASSWORD, startLifecycleApp } from "./lifecycle-helpers.ts";

for (const provider of providers()) {
  describe(`secret scan over the account lifecycle (${provider})`, () => {
    test("no hook secret in any log line or response body", async (t) => {
      const app = await startLifecycleApp(provider);
      t.after(() => app.close());
      const admin = await app.adminToken();
      const { userId, pair } = await app.register("scan", "scan@example.com");

      // Email change: success, replay, and a failing hook.
      await app.request("POST", "/auth/email", { token: pair.access_token, body: { newEmail: "scan2@example.com", currentPassword: PASSWORD } });
      const verification = app.of("emailVerification").at(-1)?.token;
      await Promise.all([1, 2, 3].map(() => app.request("POST", "/auth/email/verify", { body: { token: verification } })));
      app.failing.add("emailVerification");
      const failedChange = await app.request("POST", "/auth/email", { token: pair.access_token, body: { newEmail: "scan3@example.com", currentPassword: PASSWORD } });
      assert.equal(failedChange.status, 400, "a failed verification mail is 400 (the route lists 204, 400, 409, 429)");
      app.failing.delete("emailVerification");

      // Magic link: success, replay, failing hook (logged only).
      await app.request("POST", "/auth/magic-link", { body: { email: "scan2@example.com" } });
      const magic = await app.next("magicLink");
      await Promise.all([1, 2].map(() => app.request("POST", "/auth/magic-link/verify", { body: { token: magic.token } })));
      app.failing.add("magicLink");
      await app.request("POST", "/auth/magic-link", { body: { email: "scan2@example.com" } });
      await app.next("magicLink", 1);
      await app.settle();
      app.failing.delete("magicLink");

      // Password reset: success and replay.
      await app.request("POST", "/auth/password/forgot", { body: { email: "scan2@example.com" } });
      const reset = await app.next("passwordReset");
      app.secrets.add("a brand new passphrase");
      await app.request("POST", "/auth/password/reset", { body: { token: reset.token, newPassword: "a brand new passphrase" } });
      await app.request("POST", "/auth/password/reset", { body: { token: reset.token, newPassword: "a brand new passphrase" } });

      // Admin: create (generated), set with a failing hook, set again.
      await app.request("POST", "/auth/users", { token: admin, body: { userName: "made", email: "made@example.com" } });
      app.failing.add("adminPasswordIssued");
      assert.equal((await app.request("POST", `/auth/users/${userId}/password`, { token: admin, body: {} })).status, 502);
      assert.equal((await app.request("POST", "/auth/users", { token: admin, body: { userName: "made2", email: "made2@example.com" } })).status, 502);
      app.failing.delete("adminPasswordIssued");

      // Invitations: failing new, success, 409, completion.
      app.failing.add("invitation");
      assert.equal((await app.request("POST", "/auth/invitations", { token: admin, body: { email: "guest@example.com" } })).status, 502);
      app.failing.delete("invitation");
      await app.request("POST", "/auth/invitations", { token: admin, body: { email: "guest@example.com" } });
      const invitation = app.of("invitation").at(-1)?.token;
      app.secrets.add("guest chosen passphrase");
      await app.request("POST", "/auth/invitations/complete", { body: { token: invitation, userName: "made", password: "guest chosen passphrase" } });
      await app.request("POST", "/auth/invitations/complete", { body: { token: invitation, userName: "guest", password: "guest chosen passphrase" } });

      const hookSecrets = app.sent.flatMap((s) => [s.message.token, s.message.password]).filter((s): s is string => typeof s === "string");
      assert.ok(hookSecrets.length >= 10, `expected many issued secrets, got ${hookSecrets.length}`);
      assert.ok(app.logs.lines.length > 50, "the scan covered real log output");
      assert.deepEqual(app.logs.leaks(hookSecrets), []);
      for (const text of app.responses) for (const s of hookSecrets) assert.ok(!text.includes(s), `a secret reached a response: ${text.slice(0, 80)}`);
      app.assertNoLeaks();
      // Nor the database: only hashes of tokens are stored.
      const stored = JSON.stringify(await app.db.singleUseToken.findMany());
      for (const s of hookSecrets) assert.ok(!stored.includes(s), "a raw token is in the database");
    });
  });
}
