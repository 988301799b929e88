// Attack: someone who has the password (phished, reused) tries to get past the second factor by
// guessing codes, by replaying a code or a challenge, or by racing requests so that one correct
// proof yields several sessions. Each challenge dies after MaxChallengeAttempts wrong codes; wrong
// codes lock the account across challenges (a fresh password sign-in does not buy new guesses);
// a TOTP step and a recovery code are accepted once; and of concurrent correct answers to one
// challenge exactly one gets a session, with every other proof left unspent.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { providers } from "../harness/databases.ts";
import { PASSWORD, startAuthApp, type AuthTestApp, type TokenPair } from "./helpers.ts";
import { challengeFor, freshCode, registerEnrolled, verify } from "./twofactor-helpers.ts";

for (const provider of providers()) {
  describe(`two-factor attacks (${provider})`, () => {
    let app: AuthTestApp;
    before(async () => {
      app = await startAuthApp(provider, { TwoFactor: { MaxChallengeAttempts: 3 }, LocalLogin: { MaxFailedAttempts: 7 } });
    });
    after(async () => {
      assert.deepEqual(app.logs.leaks(app.secrets), []);
      await app.close();
    });

    test("a challenge dies after MaxChallengeAttempts wrong codes; the correct code is then refused", async () => {
      const user = await registerEnrolled(app, "Gus");
      const challenge = await challengeFor(app, "Gus");
      for (const guess of ["111111", "222222", "333333"]) assert.equal((await verify(app, challenge, guess)).status, 401);
      assert.equal((await verify(app, challenge, freshCode(app, user.secret))).status, 401, "dead challenge");
      assert.equal((await verify(app, await challengeFor(app, "Gus"), freshCode(app, user.secret))).status, 200, "a new challenge works");
    });

    test("concurrent wrong codes cannot exceed the cap: the challenge is dead afterwards", async () => {
      const user = await registerEnrolled(app, "Hal");
      const challenge = await challengeFor(app, "Hal");
      const guesses = Array.from({ length: 6 }, (_, i) => String(100000 + i));
      const results = await Promise.all(guesses.map((g) => verify(app, challenge, g)));
      assert.ok(results.every((r) => r.status === 401));
      assert.equal((await verify(app, challenge, freshCode(app, user.secret))).status, 401);
    });

    test("wrong codes across fresh challenges lock the account (password sign-in refused)", async () => {
      await registerEnrolled(app, "Ivy");
      let wrong = 0;
      for (let round = 0; round < 3; round++) {
        const challenge = await challengeFor(app, "Ivy");
        for (let i = 0; i < 3 && wrong < 7; i++, wrong++) assert.equal((await verify(app, challenge, String(200000 + wrong))).status, 401);
      }
      const locked = await app.login("Ivy", PASSWORD);
      assert.equal(locked.status, 401, "locked out by wrong codes");
    });

    test("concurrent correct answers to one challenge: exactly one session", async () => {
      const user = await registerEnrolled(app, "Jon");
      const challenge = await challengeFor(app, "Jon");
      const code = freshCode(app, user.secret);
      const results = await Promise.all(Array.from({ length: 5 }, () => verify(app, challenge, code)));
      assert.deepEqual(results.map((r) => r.status).sort(), [200, 401, 401, 401, 401]);
      assert.equal(await app.db.refreshFamily.count({ where: { userId: user.userId, amr: { contains: "otp" } } }), 1);
    });

    test("concurrent distinct recovery codes on one challenge: one session, one code spent", async () => {
      const user = await registerEnrolled(app, "Kim");
      const challenge = await challengeFor(app, "Kim");
      const codes = user.recoveryCodes.slice(0, 4);
      const results = await Promise.all(codes.map((c) => verify(app, challenge, c)));
      assert.deepEqual(results.map((r) => r.status).sort(), [200, 401, 401, 401]);
      assert.equal(await app.db.recoveryCode.count({ where: { userId: user.userId, usedAt: { not: null } } }), 1, "losers' codes stay unspent");
      const winner = results.findIndex((r) => r.status === 200);
      const unspent = codes.filter((_, i) => i !== winner)[0] ?? "";
      assert.equal((await verify(app, await challengeFor(app, "Kim"), unspent)).status, 200);
    });

    test("one code raced on two challenges: accepted once", async () => {
      const user = await registerEnrolled(app, "Lou");
      const [a, b] = [await challengeFor(app, "Lou"), await challengeFor(app, "Lou")];
      const code = freshCode(app, user.secret);
      const results = await Promise.all([verify(app, a, code), verify(app, b, code)]);
      assert.deepEqual(results.map((r) => r.status).sort(), [200, 401]);
      const pair = results.find((r) => r.status === 200)?.body as TokenPair;
      assert.ok(pair.access_token);
    });

    test("a challenge is bound to its user: another user's code does not answer it", async () => {
      await registerEnrolled(app, "Mia");
      const other = await registerEnrolled(app, "Ned");
      const challenge = await challengeFor(app, "Mia");
      assert.equal((await verify(app, challenge, freshCode(app, other.secret))).status, 401);
      assert.equal((await verify(app, challenge, other.recoveryCodes[0] ?? "")).status, 401);
    });

    test("an expired challenge is refused", async () => {
      const user = await registerEnrolled(app, "Oz");
      const challenge = await challengeFor(app, "Oz");
      app.clock.advance(5 * 60_000 + 1000);
      assert.equal((await verify(app, challenge, freshCode(app, user.secret))).status, 401);
    });
  });
}
