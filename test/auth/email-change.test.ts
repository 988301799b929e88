/**
 * Email change and verification (login-service.md Account rules 7, 8, 9; Endpoints): the link goes
 * to the new address only, nothing moves until it is redeemed, redemption writes the credential
 * and profile addresses without moving the stamp, the current password is always required, 409
 * at request and at redemption, both 429 causes, and the routes exist only with the hook.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { providers } from "../harness/databases.ts";
import { PASSWORD, startLifecycleApp, type LifecycleApp, type TokenPair } from "./lifecycle-helpers.ts";

for (const provider of providers()) {
  describe(`email change and verification (${provider})`, () => {
    let app: LifecycleApp;
    before(async () => {
      app = await startLifecycleApp(provider);
    });
    after(async () => {
      app.assertNoLeaks();
      await app.close();
    });

    const change = (token: string, newEmail: string, currentPassword?: string) =>
      app.request("POST", "/auth/email", { token, body: currentPassword === undefined ? { newEmail } : { newEmail, currentPassword } });

    test("the link goes to the new address only; nothing moves until it is redeemed; the stamp does not move", async () => {
      const { userId, pair } = await app.register("ann", "ann@example.com");
      const stamp = (await app.db.user.findUniqueOrThrow({ where: { id: userId } })).securityStamp;
      const r = await change(pair.access_token, "Ann.New@Example.com", PASSWORD);
      assert.equal(r.status, 204, r.text);
      assert.equal(r.text, "");
      const message = app.of("emailVerification").at(-1);
      assert.ok(message?.token);
      assert.equal(message.to, "Ann.New@Example.com");
      assert.equal(message.userId, userId);
      assert.equal(message.link, `http://localhost:8000/verify-email?token=${encodeURIComponent(message.token)}`);
      const pending = await app.db.passwordCredential.findUniqueOrThrow({ where: { userId } });
      assert.equal(pending.email, "ann@example.com", "nothing moves before redemption");
      assert.equal(pending.emailConfirmedAt, null);
      // Only the hash is stored.
      const row = await app.db.singleUseToken.findFirstOrThrow({ where: { userId, kind: "email-verification" } });
      assert.notEqual(row.tokenHash, message.token);
      assert.ok(!JSON.stringify(row).includes(message.token));

      const v = await app.request("POST", "/auth/email/verify", { body: { token: message.token } });
      assert.equal(v.status, 204, v.text);
      const cred = await app.db.passwordCredential.findUniqueOrThrow({ where: { userId } });
      assert.equal(cred.email, "Ann.New@Example.com");
      assert.equal(cred.normalizedEmail, "ann.new@example.com");
      assert.ok(cred.emailConfirmedAt);
      const user = await app.db.user.findUniqueOrThrow({ where: { id: userId } });
      assert.equal(user.email, "Ann.New@Example.com");
      assert.equal(user.securityStamp, stamp, "proving an address changes no credential");
      // Nobody is signed out: the session refreshes, and the next token carries the verified email.
      const refreshed = await app.request("POST", "/auth/refresh", { body: { refreshToken: pair.refresh_token } });
      assert.equal(refreshed.status, 200, refreshed.text);
      const claims = JSON.parse(Buffer.from((refreshed.body as TokenPair).access_token.split(".")[1] ?? "", "base64url").toString()) as { email?: string };
      assert.equal(claims.email, "Ann.New@Example.com");
      assert.equal((await app.login("ann.new@example.com", PASSWORD)).status, 200, "the new address signs in");

      const again = await app.request("POST", "/auth/email/verify", { body: { token: message.token } });
      assert.equal(again.status, 400, "a used link is refused");
      assert.ok(Array.isArray((again.body as { errors: string[] }).errors));
    });

    test("the current password is always required, also to resend for the current address", async () => {
      const { pair } = await app.register("bo", "bo@example.com");
      const count = app.of("emailVerification").length;
      const missing = await change(pair.access_token, "bo@example.com");
      assert.equal(missing.status, 400);
      const wrong = await change(pair.access_token, "bo@example.com", "not the password at all");
      assert.equal(wrong.status, 400);
      assert.deepEqual(Object.keys(wrong.body as object), ["errors"]);
      assert.equal(app.of("emailVerification").length, count, "no mail without the password");
      const resend = await change(pair.access_token, "bo@example.com", PASSWORD);
      assert.equal(resend.status, 204, resend.text);
      const message = app.of("emailVerification").at(-1);
      assert.equal(message?.to, "bo@example.com");
      assert.equal((await app.request("POST", "/auth/email", { body: { newEmail: "x@example.com", currentPassword: PASSWORD } })).status, 401, "bearer required");
    });

    test("a newer link retires the earlier one; a password change retires the outstanding link", async () => {
      const { pair } = await app.register("cy", "cy@example.com");
      assert.equal((await change(pair.access_token, "cy1@example.com", PASSWORD)).status, 204);
      const first = app.of("emailVerification").at(-1);
      assert.equal((await change(pair.access_token, "cy2@example.com", PASSWORD)).status, 204);
      const second = app.of("emailVerification").at(-1);
      assert.equal((await app.request("POST", "/auth/email/verify", { body: { token: first?.token } })).status, 400);
      const p = await app.request("POST", "/auth/password", { token: pair.access_token, body: { currentPassword: PASSWORD, newPassword: "another long passphrase" } });
      assert.equal(p.status, 204, p.text);
      app.secrets.add("another long passphrase");
      assert.equal((await app.request("POST", "/auth/email/verify", { body: { token: second?.token } })).status, 400, "retired by the password change");
    });

    test("409 when another account holds the address verified or as a legacy user name, at request time", async () => {
      const holder = await app.register("dee", "dee@example.com");
      assert.equal((await change(holder.pair.access_token, "dee@example.com", PASSWORD)).status, 204);
      assert.equal((await app.request("POST", "/auth/email/verify", { body: { token: app.of("emailVerification").at(-1)?.token } })).status, 204);
      const other = await app.register("eve", "eve@example.com");
      const taken = await change(other.pair.access_token, "DEE@example.com", PASSWORD);
      assert.equal(taken.status, 409, taken.text);
      assert.ok((taken.body as { errors: string[] }).errors[0]);
      // A legacy account whose user name is an address (from before user names refused `@`).
      const legacy = await app.register("legacy", "legacy@example.com");
      await app.db.passwordCredential.update({ where: { userId: legacy.userId }, data: { userName: "old@example.com", normalizedUserName: "old@example.com" } });
      assert.equal((await change(other.pair.access_token, "old@example.com", PASSWORD)).status, 409);
      // An address another account only typed is no obstacle.
      await app.register("fay", "typed@example.com");
      assert.equal((await change(other.pair.access_token, "typed@example.com", PASSWORD)).status, 204);
    });

    test("409 re-checked at redemption; the link still works once the address is free again", async () => {
      const a = await app.register("gus", "gus@example.com");
      const b = await app.register("hal", "hal@example.com");
      assert.equal((await change(a.pair.access_token, "contested@example.com", PASSWORD)).status, 204);
      const linkA = app.of("emailVerification").at(-1)?.token;
      assert.equal((await change(b.pair.access_token, "contested@example.com", PASSWORD)).status, 204);
      const linkB = app.of("emailVerification").at(-1)?.token;
      assert.equal((await app.request("POST", "/auth/email/verify", { body: { token: linkB } })).status, 204);
      const late = await app.request("POST", "/auth/email/verify", { body: { token: linkA } });
      assert.equal(late.status, 409, late.text);
      const credA = await app.db.passwordCredential.findUniqueOrThrow({ where: { userId: a.userId } });
      assert.equal(credA.email, "gus@example.com", "nothing written on 409");
      // hal moves away: the contested address is free and gus's link (not consumed by the 409) works.
      assert.equal((await change(b.pair.access_token, "hal2@example.com", PASSWORD)).status, 204);
      assert.equal((await app.request("POST", "/auth/email/verify", { body: { token: app.of("emailVerification").at(-1)?.token } })).status, 204);
      assert.equal((await app.request("POST", "/auth/email/verify", { body: { token: linkA } })).status, 204);
    });

    test("an expired link is refused", async () => {
      const { pair } = await app.register("ida", "ida@example.com");
      assert.equal((await change(pair.access_token, "ida2@example.com", PASSWORD)).status, 204);
      const token = app.of("emailVerification").at(-1)?.token;
      app.clock.advance(24 * 3600_000 + 1000);
      assert.equal((await app.request("POST", "/auth/email/verify", { body: { token } })).status, 400);
      assert.equal((await app.request("POST", "/auth/email/verify", { body: { token: "made-up" } })).status, 400);
    });
  });

  describe(`email change 429 causes (${provider})`, () => {
    test("per-account MailRequestCooldown and per-address rate limit each say which", async (t) => {
      const app = await startLifecycleApp(provider, { config: { LocalLogin: { MailRequestCooldown: "00:01:00", RateLimit: { Enabled: true, PermitLimit: 4, Window: "00:10:00" } } } });
      t.after(() => app.close());
      // Registration is rate limited too: register through the database-free path once.
      const { pair } = await app.register("jo", "jo@example.com");
      const first = await app.request("POST", "/auth/email", { token: pair.access_token, body: { newEmail: "jo2@example.com", currentPassword: PASSWORD } });
      assert.equal(first.status, 204, first.text);
      const cooled = await app.request("POST", "/auth/email", { token: pair.access_token, body: { newEmail: "jo3@example.com", currentPassword: PASSWORD } });
      assert.equal(cooled.status, 429, cooled.text);
      assert.match((cooled.body as { errors: string[] }).errors[0] ?? "", /sent to this account/);
      assert.ok(Number(cooled.headers.get("retry-after")) >= 1);
      // Once the cooldown has passed the account may ask again.
      app.clock.advance(61_000);
      const later = await app.request("POST", "/auth/email", { token: pair.access_token, body: { newEmail: "jo3@example.com", currentPassword: PASSWORD } });
      assert.equal(later.status, 204, later.text);
      const limited = await app.request("POST", "/auth/email", { token: pair.access_token, body: { newEmail: "jo4@example.com", currentPassword: PASSWORD } });
      assert.equal(limited.status, 429);
      assert.match((limited.body as { errors: string[] }).errors[0] ?? "", /network address/);
      app.assertNoLeaks();
    });
  });

  describe(`email routes without the hook (${provider})`, () => {
    test("unmapped (404) when no email-verification hook is registered", async (t) => {
      const app = await startLifecycleApp(provider, { hooks: ["passwordReset"] });
      t.after(() => app.close());
      const { pair } = await app.register("kim", "kim@example.com");
      assert.equal((await app.request("POST", "/auth/email", { token: pair.access_token, body: { newEmail: "k@example.com", currentPassword: PASSWORD } })).status, 404);
      assert.equal((await app.request("POST", "/auth/email/verify", { body: { token: "x" } })).status, 404);
    });
  });
}
