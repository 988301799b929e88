/**
 * Magic links (decisions.md Auth decisions; login-service.md Endpoints): 204 for every request,
 * the link mailed after the response, sign-in with amr ["email"], a challenge for an enrolled
 * user unless a trusted device comes along, the per-address cooldown, the verified-address rule,
 * and no routes without the hook.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { providers } from "../harness/databases.ts";
import { registerEnrolled, signInWithCode } from "./twofactor-helpers.ts";
import { claimsOf, eventually, startLifecycleApp, type LifecycleApp, type TokenPair } from "./lifecycle-helpers.ts";

for (const provider of providers()) {
  describe(`magic links (${provider})`, () => {
    let app: LifecycleApp;
    before(async () => {
      app = await startLifecycleApp(provider);
    });
    after(async () => {
      app.assertNoLeaks();
      await app.close();
    });

    const ask = async (email: string): Promise<void> => {
      const r = await app.request("POST", "/auth/magic-link", { body: { email } });
      assert.equal(r.status, 204, r.text);
      assert.equal(r.text, "");
    };
    const redeem = (token: string | undefined, deviceToken?: string) =>
      app.request("POST", "/auth/magic-link/verify", { body: deviceToken === undefined ? { token } : { token, deviceToken } });

    test("a known address gets a link that signs in once, with amr [\"email\"]", async () => {
      const { userId } = await app.register("mia", "Mia@Example.com");
      const count = app.of("magicLink").length;
      await ask("mia@example.com");
      const message = await app.next("magicLink", count);
      assert.equal(message.to, "Mia@Example.com");
      assert.equal(message.userId, userId);
      assert.ok(message.token && message.token.length >= 43, "at least 256 bits, base64url");
      assert.equal(message.link, `http://localhost:8000/magic-link?token=${encodeURIComponent(message.token)}`);
      const r = await redeem(message.token);
      assert.equal(r.status, 200, r.text);
      const pair = r.body as TokenPair;
      assert.equal(pair.token_type, "Bearer");
      const claims = claimsOf(pair);
      assert.equal(claims.sub, userId);
      assert.deepEqual(claims.amr, ["email"]);
      const replay = await redeem(message.token);
      assert.equal(replay.status, 401);
      assert.equal((replay.body as { error: string }).error, "invalid_grant");
    });

    test("unknown addresses and nonsense answer 204 and mail nothing; bad tokens are 401", async () => {
      const count = app.of("magicLink").length;
      await ask("nobody@example.com");
      await ask("not an address");
      await ask("");
      await app.settle();
      assert.equal(app.of("magicLink").length, count);
      for (const token of ["", "made-up", "x".repeat(600)]) assert.equal((await redeem(token)).status, 401);
    });

    test("a malformed verify body is the collapsed 401, and the link it carried still works", async () => {
      await app.register("kit", "kit@example.com");
      const count = app.of("magicLink").length;
      await ask("kit@example.com");
      const message = await app.next("magicLink", count);
      const malformed: unknown[] = [{ token: 12345 }, { token: message.token, deviceToken: 5 }, { token: [message.token] }, [], {}];
      for (const body of malformed) {
        const r = await app.request("POST", "/auth/magic-link/verify", { body });
        assert.equal(r.status, 401, `${JSON.stringify(body)}: ${r.text}`);
        assert.deepEqual(r.body, { error: "invalid_grant", error_description: "The credentials were not accepted." });
      }
      assert.equal((await redeem(message.token)).status, 200, "refused unread: the link was not spent");
    });

    test("an expired link is refused; a newer link retires the older one", async () => {
      await app.register("ned", "ned@example.com");
      let count = app.of("magicLink").length;
      await ask("ned@example.com");
      const old = await app.next("magicLink", count);
      count += 1;
      await ask("ned@example.com");
      const newer = await app.next("magicLink", count);
      assert.equal((await redeem(old.token)).status, 401, "retired by the newer link");
      app.clock.advance(15 * 60_000 + 1000);
      assert.equal((await redeem(newer.token)).status, 401, "expired");
    });

    test("an enrolled user gets a challenge; a trusted device token skips it", async () => {
      const user = await registerEnrolled(app, "ola");
      const pair = await signInWithCode(app, user, { rememberDevice: true });
      assert.ok(pair.device_token);
      let count = app.of("magicLink").length;
      await ask("ola@example.com");
      const first = await app.next("magicLink", count);
      const challenged = await redeem(first.token);
      assert.equal(challenged.status, 200);
      assert.equal((challenged.body as { two_factor_required?: boolean }).two_factor_required, true);
      assert.equal((challenged.body as { access_token?: string }).access_token, undefined);
      count += 1;
      app.clock.advance(61_000);
      await ask("ola@example.com");
      const second = await app.next("magicLink", count);
      const trusted = await redeem(second.token, pair.device_token);
      assert.equal(trusted.status, 200, trusted.text);
      const tokens = trusted.body as TokenPair;
      assert.ok(tokens.access_token);
      assert.ok(tokens.device_token && tokens.device_token !== pair.device_token, "the device token rotated");
      app.secrets.add(tokens.device_token);
      assert.deepEqual(claimsOf(tokens).amr, ["email", "mfa"]);
    });
  });

  describe(`magic-link cooldown and verified-address rule (${provider})`, () => {
    test("one mail per address per MailRequestCooldown", async (t) => {
      const app = await startLifecycleApp(provider, { config: { LocalLogin: { MailRequestCooldown: "00:01:00" } } });
      t.after(() => app.close());
      await app.register("pia", "pia@example.com");
      for (let i = 0; i < 3; i += 1) assert.equal((await app.request("POST", "/auth/magic-link", { body: { email: "pia@example.com" } })).status, 204);
      await eventually(() => app.of("magicLink").length === 1, "one magic link");
      await app.settle();
      assert.equal(app.of("magicLink").length, 1);
      app.clock.advance(61_000);
      assert.equal((await app.request("POST", "/auth/magic-link", { body: { email: "PIA@example.com" } })).status, 204);
      await eventually(() => app.of("magicLink").length === 2, "a second link after the cooldown");
      app.assertNoLeaks();
    });

    test("with RequireVerifiedEmailForPasswordReset an unproven address gets no link", async (t) => {
      const app = await startLifecycleApp(provider, { config: { LocalLogin: { RequireVerifiedEmailForPasswordReset: true } } });
      t.after(() => app.close());
      const { pair } = await app.register("quin", "quin@example.com");
      assert.equal((await app.request("POST", "/auth/magic-link", { body: { email: "quin@example.com" } })).status, 204);
      await app.settle();
      await app.settle();
      assert.equal(app.of("magicLink").length, 0);
      assert.equal((await app.request("POST", "/auth/email", { token: pair.access_token, body: { newEmail: "quin@example.com", currentPassword: "correct horse battery staple" } })).status, 204);
      assert.equal((await app.request("POST", "/auth/email/verify", { body: { token: app.of("emailVerification").at(-1)?.token } })).status, 204);
      assert.equal((await app.request("POST", "/auth/magic-link", { body: { email: "quin@example.com" } })).status, 204);
      await eventually(() => app.of("magicLink").length === 1, "the link once verified");
      app.assertNoLeaks();
    });

    test("unmapped (404) without a magic-link hook", async (t) => {
      const app = await startLifecycleApp(provider, { hooks: ["passwordReset"] });
      t.after(() => app.close());
      assert.equal((await app.request("POST", "/auth/magic-link", { body: { email: "a@example.com" } })).status, 404);
      assert.equal((await app.request("POST", "/auth/magic-link/verify", { body: { token: "x" } })).status, 404);
    });
  });
}
