/**
 * Attacks: account enumeration through "forgot password" and replay of a reset link. Forgot
 * answers 204 for every input before any lookup; the link reaches the hook raw and nothing else
 * (no response, no log line); a link works once, also when redeemed concurrently; the cooldown
 * stops mailbox flooding; and a reset revokes every session.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { providers } from "../harness/databases.ts";
import { startAuthApp, PASSWORD, type AuthTestApp } from "./helpers.ts";

for (const provider of providers()) {
  describe(`forgot and reset (${provider})`, () => {
    let app: AuthTestApp;
    before(async () => {
      app = await startAuthApp(provider);
    });
    after(async () => {
      for (const m of app.mail) if (m.token) app.secrets.add(m.token);
      assert.deepEqual(app.logs.leaks(app.secrets), []);
      await app.close();
    });
    const forgot = (email: string) => app.request("POST", "/auth/password/forgot", { body: { email } });
    const reset = (token: string, newPassword: string) => {
      app.secrets.add(newPassword);
      return app.request("POST", "/auth/password/reset", { body: { token, newPassword } });
    };
    const waitForMail = async (count: number) => {
      for (let i = 0; i < 100 && app.mail.length < count; i += 1) await new Promise((r) => setTimeout(r, 20));
    };

    test("204 for unknown and known addresses; the hook gets the raw token and a configured link", async () => {
      const unknown = await forgot("nobody@example.com");
      assert.equal(unknown.status, 204);
      assert.equal(unknown.text, "");
      assert.equal((await forgot("not even an address")).status, 204);
      const { userId, pair } = await app.register("hana", "hana@example.com");
      const known = await forgot("HANA@example.com");
      assert.equal(known.status, 204);
      assert.equal(known.text, "");
      await waitForMail(1);
      assert.equal(app.mail.length, 1);
      const message = app.mail[0];
      assert.equal(message?.to, "hana@example.com");
      assert.equal(message?.userId, userId);
      assert.ok(message?.token && message.token.length >= 43);
      assert.equal(message?.link, `http://localhost:8000/reset-password?token=${encodeURIComponent(message?.token ?? "")}`);

      // Cooldown: a second request within MailRequestCooldown is dropped.
      await forgot("hana@example.com");
      await app.settle();
      assert.equal(app.mail.length, 1);

      const token = message?.token ?? "";
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => reset(token, `new password number ${i}`)));
      assert.deepEqual(results.map((r) => r.status).sort(), [204, ...Array(9).fill(400)], "single use under concurrency");
      const winner = results.findIndex((r) => r.status === 204);
      assert.equal((await app.login("hana", `new password number ${winner}`)).status, 200);
      assert.equal((await app.login("hana", PASSWORD)).status, 401);
      assert.equal((await app.request("POST", "/auth/refresh", { body: { refreshToken: pair.refresh_token } })).status, 401, "sessions revoked");
      const replay = await reset(token, "yet another password");
      assert.deepEqual(replay.body, { errors: ["This reset link is not valid or has expired. Ask for a new one."] });
    });

    test("an expired link and a weak password are refused with errors", async () => {
      await app.register("ivan", "ivan@example.com");
      await forgot("ivan@example.com");
      await waitForMail(2);
      const token = app.mail.find((m) => m.to === "ivan@example.com")?.token ?? "";
      assert.equal((await reset(token, "short")).status, 400);
      app.clock.advance(60 * 60_000 + 1000);
      assert.equal((await reset(token, "a perfectly fine password")).status, 400);
    });
  });

  describe(`reset requires a verified address when configured (${provider})`, () => {
    test("an unverified address gets no link (still 204); a verified one does", async () => {
      const app = await startAuthApp(provider, { LocalLogin: { RequireVerifiedEmailForPasswordReset: true } });
      try {
        const { userId } = await app.register("jon", "jon@example.com");
        assert.equal((await app.request("POST", "/auth/password/forgot", { body: { email: "jon@example.com" } })).status, 204);
        await app.settle();
        assert.equal(app.mail.length, 0);
        await app.db.passwordCredential.update({ where: { userId }, data: { emailConfirmedAt: new Date() } });
        app.clock.advance(61_000);
        await app.request("POST", "/auth/password/forgot", { body: { email: "jon@example.com" } });
        for (let i = 0; i < 100 && app.mail.length === 0; i += 1) await new Promise((r) => setTimeout(r, 20));
        assert.equal(app.mail.length, 1);
      } finally {
        for (const m of app.mail) if (m.token) app.secrets.add(m.token);
        assert.deepEqual(app.logs.leaks(app.secrets), []);
        await app.close();
      }
    });
  });
}
