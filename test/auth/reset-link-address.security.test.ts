/**
 * Attack: take over an account through a reset link left in a mailbox the account no longer uses.
 * A password-reset link was redeemable after the account's address changed: whoever reads the old
 * mailbox (a former employer, a recycled address, the attacker who made the owner move) could
 * still set the password. The same held when another account proved the address and this account
 * lost it. A reset link now works only while the account still holds the address it was mailed
 * to. Raced against the address change itself, exactly one of the two wins.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { HookMessage } from "../../control/app/host.ts";
import { providers } from "../harness/databases.ts";
import { PASSWORD, startAuthApp, type AuthTestApp } from "./helpers.ts";

const MAIL_COOLDOWN_MS = 60_000;

for (const provider of providers()) {
  describe(`a reset link dies with the address it was mailed to (${provider})`, () => {
    let app: AuthTestApp;
    before(async () => {
      app = await startAuthApp(provider);
    });
    after(async () => {
      for (const m of app.mail) if (m.token) app.secrets.add(m.token);
      assert.deepEqual(app.logs.leaks(app.secrets), []);
      await app.close();
    });

    async function mailTo(to: string, kind: "reset-password" | "verify-email"): Promise<HookMessage> {
      for (let i = 0; i < 200; i += 1) {
        const found = app.mail.filter((m) => m.to === to && m.link?.includes(kind)).at(-1);
        if (found) return found;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      throw new Error(`no ${kind} mail to ${to}`);
    }
    const resetLink = async (address: string): Promise<string> => {
      app.clock.advance(MAIL_COOLDOWN_MS + 1000);
      const before = app.mail.length;
      assert.equal((await app.request("POST", "/auth/password/forgot", { body: { email: address } })).status, 204);
      for (let i = 0; i < 200 && app.mail.length === before; i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
      const m = await mailTo(address, "reset-password");
      app.secrets.add(m.token ?? "");
      return m.token ?? "";
    };
    const changeAddress = async (token: string, newEmail: string): Promise<string> => {
      app.clock.advance(MAIL_COOLDOWN_MS + 1000);
      const asked = await app.request("POST", "/auth/email", { token, body: { newEmail, currentPassword: PASSWORD } });
      assert.equal(asked.status, 204, asked.text);
      const m = await mailTo(newEmail, "verify-email");
      app.secrets.add(m.token ?? "");
      return m.token ?? "";
    };
    const reset = (token: string) => {
      app.secrets.add("taken over by the old mailbox");
      return app.request("POST", "/auth/password/reset", { body: { token, newPassword: "taken over by the old mailbox" } });
    };

    test("after the owner moved to a new address, the link in the old mailbox is refused", async () => {
      const { pair } = await app.register("ola", "ola@old.example.com");
      const oldLink = await resetLink("ola@old.example.com");
      const verifyToken = await changeAddress(pair.access_token, "ola@new.example.com");
      assert.equal((await app.request("POST", "/auth/email/verify", { body: { token: verifyToken } })).status, 204);
      const r = await reset(oldLink);
      assert.equal(r.status, 400, r.text);
      assert.equal((await app.login("ola", PASSWORD)).status, 200, "the password is unchanged");
    });

    test("an address another account proved is released, and with it this account's reset link", async () => {
      await app.register("typist", "shared@example.com");
      const typistLink = await resetLink("shared@example.com");
      const prover = await app.register("prover", "prover@example.com");
      const verifyToken = await changeAddress(prover.pair.access_token, "shared@example.com");
      assert.equal((await app.request("POST", "/auth/email/verify", { body: { token: verifyToken } })).status, 204);
      assert.equal((await reset(typistLink)).status, 400);
      assert.equal((await app.login("typist", PASSWORD)).status, 200);
    });

    test("a reset racing the address change: exactly one of them takes effect", async () => {
      for (let round = 0; round < 4; round += 1) {
        const userName = `racer${round}`;
        const { pair } = await app.register(userName, `${userName}@old.example.com`);
        const link = await resetLink(`${userName}@old.example.com`);
        const verifyToken = await changeAddress(pair.access_token, `${userName}@new.example.com`);
        const [resetAnswer, verifyAnswer] = await Promise.all([reset(link), app.request("POST", "/auth/email/verify", { body: { token: verifyToken } })]);
        const statuses = [resetAnswer.status, verifyAnswer.status].sort();
        assert.deepEqual(statuses, [204, 400], `round ${round}: reset ${resetAnswer.status}, verify ${verifyAnswer.status}`);
        const credential = await app.db.passwordCredential.findFirstOrThrow({ where: { userName } });
        if (resetAnswer.status === 204) assert.equal(credential.normalizedEmail, `${userName}@old.example.com`, "reset first: the address change died with the password change");
        else assert.equal(credential.normalizedEmail, `${userName}@new.example.com`, "address first: the old link died");
      }
    });
  });
}
