/**
 * Admin accounts (login-service.md Account rules 1, 9-12; Authentication 3): creation with a given
 * or generated password that never appears in a response, 400/409 cases, the admin policy (403),
 * the mapping conditions (hook AND admin role), and admin password setting: mailed only to the
 * credential's own address, every refusal before anything changes, sessions revoked.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { providers } from "../harness/databases.ts";
import { PASSWORD, startLifecycleApp, type LifecycleApp } from "./lifecycle-helpers.ts";

for (const provider of providers()) {
  describe(`admin account creation (${provider})`, () => {
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
    const create = (body: unknown, token = admin) => app.request("POST", "/auth/users", { token, body });

    test("a generated password goes to the hook only; the caller is not signed in as the account", async () => {
      const r = await create({ userName: "newbie", email: "Newbie@Example.com" });
      assert.equal(r.status, 201, r.text);
      const body = r.body as Record<string, unknown>;
      assert.deepEqual(Object.keys(body).sort(), ["email", "userId", "userName"]);
      assert.equal(body.userName, "newbie");
      assert.equal(body.email, "Newbie@Example.com");
      const message = app.of("adminPasswordIssued").at(-1);
      assert.ok(message?.password && message.password.length >= 8);
      assert.equal(message.to, "Newbie@Example.com");
      assert.equal(message.userId, body.userId);
      assert.equal(message.token, undefined);
      assert.ok(!r.text.includes(message.password));
      assert.equal(r.headers.get("set-cookie"), null);
      assert.equal((await app.login("newbie", message.password)).status, 200, "the generated password signs in");
      const cred = await app.db.passwordCredential.findUniqueOrThrow({ where: { userId: String(body.userId) } });
      assert.equal(cred.emailConfirmedAt, null, "an admin's typing proves no address");
      assert.ok(!cred.passwordHash.includes(message.password));
    });

    test("an admin-given password is delivered too (the owner did not choose it); without an address nothing is mailed", async () => {
      app.secrets.add("admin chosen passphrase");
      const count = app.of("adminPasswordIssued").length;
      const r = await create({ userName: "given", email: "given@example.com", password: "admin chosen passphrase" });
      assert.equal(r.status, 201, r.text);
      assert.equal(app.of("adminPasswordIssued").length, count + 1);
      assert.equal(app.of("adminPasswordIssued").at(-1)?.password, "admin chosen passphrase");
      const bare = await create({ userName: "bare", email: null, password: "admin chosen passphrase" });
      assert.equal(bare.status, 201, bare.text);
      assert.equal(app.of("adminPasswordIssued").length, count + 1);
      assert.equal((await app.login("bare", "admin chosen passphrase")).status, 200);
    });

    test("400 for neither email nor password, an @ in the user name or a weak password; 409 for a taken name", async () => {
      const count = app.of("adminPasswordIssued").length;
      for (const body of [{ userName: "nothing" }, { userName: "nothing", email: "", password: null }, { userName: "a@b", email: "ab@example.com" }, { userName: "weak", email: "w@example.com", password: "short" }]) {
        const r = await create(body);
        assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
        assert.ok(Array.isArray((r.body as { errors: unknown }).errors));
      }
      const taken = await create({ userName: "NEWBIE", email: "other@example.com" });
      assert.equal(taken.status, 409);
      assert.ok(Array.isArray((taken.body as { errors: unknown }).errors));
      assert.equal(app.of("adminPasswordIssued").length, count, "no hook call for a refused request");
    });

    test("a signed-in non-admin gets 403 {error: forbidden}; no token gets 401", async () => {
      const { pair } = await app.register("plain", "plain@example.com");
      const r = await create({ userName: "x1", email: "x1@example.com" }, pair.access_token);
      assert.equal(r.status, 403);
      assert.equal((r.body as { error: string }).error, "forbidden");
      assert.equal((await app.request("POST", "/auth/users", { body: { userName: "x2", email: "x2@example.com" } })).status, 401);
      const set = await app.request("POST", `/auth/users/${pair.access_token.length}/password`, { token: pair.access_token, body: {} });
      assert.equal(set.status, 403);
    });
  });

  describe(`admin password setting (${provider})`, () => {
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
    const setPassword = (userId: string, body: unknown = {}) => app.request("POST", `/auth/users/${userId}/password`, { token: admin, body });

    test("sets a generated password, revokes every session and mails only the credential's own address", async () => {
      const { userId, pair } = await app.register("rita", "rita@example.com");
      // A provider wrote a different profile email: it must never receive the password.
      await app.db.user.update({ where: { id: userId }, data: { email: "profile@attacker.example" } });
      const stamp = (await app.db.user.findUniqueOrThrow({ where: { id: userId } })).securityStamp;
      const r = await setPassword(userId);
      assert.equal(r.status, 204, r.text);
      const message = app.of("adminPasswordIssued").at(-1);
      assert.equal(message?.to, "rita@example.com");
      assert.ok(message?.password);
      assert.equal((await app.request("POST", "/auth/refresh", { body: { refreshToken: pair.refresh_token } })).status, 401, "sessions revoked");
      assert.notEqual((await app.db.user.findUniqueOrThrow({ where: { id: userId } })).securityStamp, stamp);
      assert.equal((await app.login("rita", PASSWORD)).status, 401);
      assert.equal((await app.login("rita", message.password)).status, 200);
    });

    test("no address and no password: 400 before anything changes; with a password it is set and nothing mailed", async () => {
      const { userId, pair } = await app.register("sam", "sam@example.com");
      await app.db.passwordCredential.update({ where: { userId }, data: { email: null, normalizedEmail: null } });
      const count = app.of("adminPasswordIssued").length;
      const r = await setPassword(userId, { password: null });
      assert.equal(r.status, 400);
      assert.equal((await app.request("POST", "/auth/refresh", { body: { refreshToken: pair.refresh_token } })).status, 200, "nothing revoked");
      assert.equal((await app.login("sam", PASSWORD)).status, 200, "password unchanged");
      app.secrets.add("admin typed passphrase");
      assert.equal((await setPassword(userId, { password: "admin typed passphrase" })).status, 204);
      assert.equal(app.of("adminPasswordIssued").length, count);
      assert.equal((await app.login("sam", "admin typed passphrase")).status, 200);
    });

    test("unknown user 400 (the route's listed answers are 204, 400, 403, 502); weak password 400", async () => {
      assert.equal((await setPassword("00000000-0000-0000-0000-000000000000")).status, 400);
      const { userId } = await app.register("tom", "tom@example.com");
      assert.equal((await setPassword(userId, { password: "short" })).status, 400);
      assert.equal((await app.login("tom", PASSWORD)).status, 200);
    });
  });

  describe(`admin setting with RequireVerifiedEmailForPasswordReset (${provider})`, () => {
    test("an unverified address: 400 before anything changes; once verified it works", async (t) => {
      const app = await startLifecycleApp(provider, { config: { LocalLogin: { RequireVerifiedEmailForPasswordReset: true } } });
      t.after(() => app.close());
      const admin = await app.adminToken();
      const { userId, pair } = await app.register("uma", "uma@example.com");
      const r = await app.request("POST", `/auth/users/${userId}/password`, { token: admin, body: {} });
      assert.equal(r.status, 400, r.text);
      assert.equal(app.of("adminPasswordIssued").length, 0);
      assert.equal((await app.request("POST", "/auth/refresh", { body: { refreshToken: pair.refresh_token } })).status, 200, "nothing revoked");
      assert.equal((await app.request("POST", "/auth/email", { token: pair.access_token, body: { newEmail: "uma@example.com", currentPassword: PASSWORD } })).status, 204);
      assert.equal((await app.request("POST", "/auth/email/verify", { body: { token: app.of("emailVerification").at(-1)?.token } })).status, 204);
      assert.equal((await app.request("POST", `/auth/users/${userId}/password`, { token: admin, body: {} })).status, 204);
      app.assertNoLeaks();
    });
  });

  describe(`admin routes mapping (${provider})`, () => {
    test("unmapped without the admin-password hook, and without Oidc:AdminRole", async (t) => {
      const noHook = await startLifecycleApp(provider, { hooks: ["passwordReset", "invitation"] });
      t.after(() => noHook.close());
      const token = await noHook.adminToken();
      assert.equal((await noHook.request("POST", "/auth/users", { token, body: { userName: "a", email: "a@example.com" } })).status, 404);
      const noRole = await startLifecycleApp(provider, { config: { Oidc: { AdminRole: "" } } });
      t.after(() => noRole.close());
      assert.equal((await noRole.request("POST", "/auth/users", { body: { userName: "a", email: "a@example.com" } })).status, 404);
      assert.equal((await noRole.request("POST", "/auth/users/x/password", { body: {} })).status, 404);
    });
  });
}
