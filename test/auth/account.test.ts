/**
 * Registration (Account rules 1, 2) and password change / first password (Account rules 3, 4):
 * taken names 409, `@` refused, unproven addresses shared; a change revokes every local session,
 * un-trusts devices, deletes passkeys, moves the stamp and retires email-verification links.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { providers } from "../harness/databases.ts";
import { startAuthApp, localToken, PASSWORD, type AuthTestApp } from "./helpers.ts";

for (const provider of providers()) {
  describe(`register (${provider})`, () => {
    let app: AuthTestApp;
    before(async () => {
      app = await startAuthApp(provider);
    });
    after(async () => {
      assert.deepEqual(app.logs.leaks(app.secrets), []);
      await app.close();
    });
    const reg = (userName: string, email: string, password = PASSWORD) => app.request("POST", "/auth/register", { body: { userName, email, password } });

    test("201 token pair; 409 for a taken name (any case, also concurrently); 400 for @", async () => {
      assert.equal((await reg("Alice", "alice@example.com")).status, 201);
      const taken = await reg("ALICE", "other@example.com");
      assert.equal(taken.status, 409);
      assert.deepEqual(taken.body, { errors: ["This user name is taken. Choose another one."] });
      const race = await Promise.all(Array.from({ length: 10 }, () => reg("racer", "racer@example.com")));
      assert.deepEqual(race.map((r) => r.status).sort(), [201, ...Array(9).fill(409)]);
      const at = await reg("bob@example.com", "bob@example.com");
      assert.equal(at.status, 400);
      assert.deepEqual(at.body, { errors: ["The user name cannot contain @."] });
      const bad = await reg("bob", "not-an-address");
      assert.equal(bad.status, 400);
    });

    test("any address of the shape local@domain is accepted; the spec lists no other address rule", async () => {
      for (const [i, email] of ["ops@localhost", "a@b.c", "名前@example.jp", "first.last+tag@sub.example.org"].entries()) {
        const r = await reg(`shape${i}`, email);
        assert.equal(r.status, 201, `${email}: ${r.text}`);
      }
      for (const email of ["", "no-at-sign", "two@@example.com", "@example.com", "name@", "a b@example.com"]) {
        const r = await reg("shapebad", email);
        assert.equal(r.status, 400, email);
        assert.ok(Array.isArray((r.body as { errors?: unknown }).errors), email);
      }
    });

    test("an address already typed by another account is held unproven by both", async () => {
      assert.equal((await reg("carol1", "carol@example.com")).status, 201);
      assert.equal((await reg("carol2", "Carol@Example.com")).status, 201);
      const rows = await app.db.passwordCredential.findMany({ where: { normalizedEmail: "carol@example.com" } });
      assert.equal(rows.length, 2);
      assert.ok(rows.every((r) => r.emailConfirmedAt === null));
    });
  });

  describe(`register not mapped by default (${provider})`, () => {
    test("404 when AllowSelfRegistration is false", async () => {
      const app = await startAuthApp(provider, { LocalLogin: { AllowSelfRegistration: false } });
      try {
        assert.equal((await app.request("POST", "/auth/register", { body: { userName: "x", email: "x@example.com", password: PASSWORD } })).status, 404);
      } finally {
        await app.close();
      }
    });
  });

  describe(`password change (${provider})`, () => {
    let app: AuthTestApp;
    before(async () => {
      app = await startAuthApp(provider);
    });
    after(async () => {
      assert.deepEqual(app.logs.leaks(app.secrets), []);
      await app.close();
    });
    const change = (token: string, body: Record<string, unknown>) => {
      for (const v of Object.values(body)) if (typeof v === "string") app.secrets.add(v);
      return app.request("POST", "/auth/password", { token, body });
    };

    test("with the current password: every session revoked, devices and passkeys gone, stamp moved, links retired", async () => {
      const { userId, pair } = await app.register("dave", "dave@example.com");
      const second = await app.login("dave", PASSWORD);
      const stamp = (await app.db.user.findUniqueOrThrow({ where: { id: userId } })).securityStamp;
      await app.db.trustedDevice.create({ data: { id: randomUUID(), userId, tokenHash: randomUUID(), securityStamp: stamp, twoFactorAt: new Date(), expiresAt: new Date(Date.now() + 86_400_000) } });
      await app.db.passkey.create({ data: { id: randomUUID(), userId, credentialId: randomUUID(), publicKey: "pk" } });
      await app.db.singleUseToken.create({ data: { id: randomUUID(), kind: "email-verification", tokenHash: randomUUID(), userId, expiresAt: new Date(Date.now() + 86_400_000) } });

      const wrong = await change(pair.access_token, { currentPassword: "not my password", newPassword: "a brand new passphrase" });
      assert.equal(wrong.status, 400);
      assert.deepEqual(wrong.body, { errors: ["The current password is not correct."] });
      const weak = await change(pair.access_token, { currentPassword: PASSWORD, newPassword: "1234567" });
      assert.equal(weak.status, 400, "shorter than MinimumPasswordLength");

      assert.equal((await change(pair.access_token, { currentPassword: PASSWORD, newPassword: "a brand new passphrase" })).status, 204);
      for (const token of [pair.refresh_token, (second.body as { refresh_token: string }).refresh_token]) {
        assert.equal((await app.request("POST", "/auth/refresh", { body: { refreshToken: token } })).status, 401);
      }
      assert.equal(await app.db.trustedDevice.count({ where: { userId } }), 0);
      assert.equal(await app.db.passkey.count({ where: { userId } }), 0);
      assert.notEqual((await app.db.user.findUniqueOrThrow({ where: { id: userId } })).securityStamp, stamp);
      assert.equal(await app.db.singleUseToken.count({ where: { userId, kind: "email-verification", retiredAt: null } }), 0);
      assert.equal((await app.login("dave", PASSWORD)).status, 401);
      assert.equal((await app.login("dave", "a brand new passphrase")).status, 200);
    });

    test("first password: needs a fresh auth_time and a usable provider handle; signs in by user name", async () => {
      const userId = randomUUID();
      await app.db.user.create({ data: { id: userId, securityStamp: randomUUID(), externalIssuer: "https://idp.example", externalSubject: "s1", externalHandle: "frank" } });
      const now = Math.floor(app.clock.now().getTime() / 1000);
      const stale = await localToken({ sub: userId, auth_time: now - 600 });
      const missing = await localToken({ sub: userId });
      const fresh = await localToken({ sub: userId, auth_time: now - 30 });
      assert.equal((await change(stale, { newPassword: "frank's first password" })).status, 400);
      assert.equal((await change(missing, { newPassword: "frank's first password" })).status, 400);
      const viaTwoFactor = await localToken({ sub: userId, toa_2fa_at: now - 10 });
      assert.equal((await change(viaTwoFactor, { newPassword: "frank's first password" })).status, 204);
      assert.equal((await change(fresh, { newPassword: "another first password" })).status, 400, "a second first password is refused");
      const cred = await app.db.passwordCredential.findUniqueOrThrow({ where: { userId } });
      assert.equal(cred.userName, "frank");
      assert.equal(cred.email, null);
      assert.equal((await app.login("frank", "frank's first password")).status, 200);

      const mailHandle = randomUUID();
      await app.db.user.create({ data: { id: mailHandle, securityStamp: randomUUID(), externalIssuer: "https://idp.example", externalSubject: "s2", externalHandle: "gina@example.com" } });
      const r = await change(await localToken({ sub: mailHandle, auth_time: now }), { newPassword: "gina's first password" });
      assert.equal(r.status, 400);
      assert.match((r.body as { errors: string[] }).errors[0] ?? "", /no user name/);
    });
  });
}
