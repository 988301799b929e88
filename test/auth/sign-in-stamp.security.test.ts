/**
 * Attack: a sign-in that outlives the password change meant to stop it. The owner changes the
 * password because someone else knows it; a login with the old password whose hash check began
 * before the change committed used to start a session afterwards, and a second-factor challenge
 * opened before the change stayed redeemable. The security stamp read with the credential is now
 * checked again in the unit that inserts the session and in the one that redeems the challenge;
 * if it moved, the answer is the collapsed 401 and nothing is left behind.
 *
 * The races are made exact with a hasher that holds chosen verifications until the change has
 * committed (the hash itself stays the real PBKDF2).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { PasswordHasher } from "../../control/app/host.ts";
import { providers } from "../harness/databases.ts";
import { cheapHasher, PASSWORD, startAuthApp, type AuthTestApp } from "./helpers.ts";
import { challengeFor, freshCode, registerEnrolled, verify } from "./twofactor-helpers.ts";

const REFUSAL = { error: "invalid_grant", error_description: "The credentials were not accepted." };
const NEW_PASSWORD = "a brand new passphrase";

/** The next `count` verifications of `held` wait for `release()` once checked; `waiting` counts them. */
function holdingHasher(held: string): { hasher: PasswordHasher; arm(count: number): void; release(): void; waiting(): number } {
  const inner = cheapHasher();
  let armed = 0;
  let waiting = 0;
  let open!: () => void;
  let gate = Promise.resolve();
  return {
    hasher: {
      hash: (password) => inner.hash(password),
      async verify(password, stored) {
        const result = await inner.verify(password, stored);
        if (armed > 0 && password === held) {
          armed -= 1;
          waiting += 1;
          await gate;
        }
        return result;
      },
    },
    arm(count) {
      armed = count;
      waiting = 0;
      gate = new Promise<void>((resolve) => (open = resolve));
    },
    release() {
      armed = 0;
      open();
    },
    waiting: () => waiting,
  };
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

for (const provider of providers()) {
  describe(`a sign-in racing a password change does not outlive it (${provider})`, () => {
    let app: AuthTestApp;
    const holding = holdingHasher(PASSWORD);
    before(async () => {
      app = await startAuthApp(provider, {}, holding.hasher);
      app.secrets.add(NEW_PASSWORD);
    });
    after(async () => {
      assert.deepEqual(app.logs.leaks(app.secrets), []);
      await app.close();
    });

    const liveFamilies = (userId: string) => app.db.refreshFamily.findMany({ where: { userId, revokedAt: null } });

    test("logins whose hash check began before the change get the collapsed 401 and no session", async () => {
      const { userId, pair } = await app.register("lena", "lena@example.com");
      // Four: with the change's own check they fill the lockout's 5 attempts in flight exactly.
      holding.arm(4);
      const logins = Array.from({ length: 4 }, () => app.login("lena", PASSWORD));
      await until(() => holding.waiting() >= 4);
      // The owner changes the password while every login is between its hash check and its session.
      const changed = await app.request("POST", "/auth/password", { token: pair.access_token, body: { currentPassword: PASSWORD, newPassword: NEW_PASSWORD } });
      holding.release();
      assert.equal(changed.status, 204, changed.text);
      const results = await Promise.all(logins);
      for (const r of results) {
        assert.equal(r.status, 401, `login: ${r.status} ${r.text}`);
        assert.deepEqual(r.body, REFUSAL);
      }
      assert.deepEqual(await liveFamilies(userId), [], "no session survives the change");
      assert.equal((await app.login("lena", NEW_PASSWORD)).status, 200, "the new password signs in");
    });

    test("challenges opened before a change: racing answers leave no live session, later answers are refused", async () => {
      const user = await registerEnrolled(app, "chad");
      // One after another: concurrent sign-ins share the lockout's attempt budget (5 in flight).
      const opened: string[] = [];
      for (let i = 0; i < 8; i++) opened.push(await challengeFor(app, "chad"));
      const [challenges, kept] = [opened.slice(0, 4), opened.slice(4)];
      const [racing, late] = [user.recoveryCodes.slice(0, 4), user.recoveryCodes.slice(4, 8)];
      const [change, ...answers] = await Promise.all([
        app.request("POST", "/auth/password", { token: user.token, body: { currentPassword: PASSWORD, newPassword: NEW_PASSWORD } }),
        ...challenges.map((c, i) => verify(app, c, racing[i] ?? "")),
      ]);
      assert.equal(change?.status, 204, `change: ${change?.status} ${change?.text}`);
      // Whatever the interleaving: an answer either finished before the change (and its session
      // was then revoked by it) or is refused with the collapsed 401; no old-stamp session is live.
      for (const r of answers) {
        if (r.status === 200) continue;
        assert.equal(r.status, 401, `racing answer: ${r.status} ${r.text}`);
        assert.deepEqual(r.body, REFUSAL);
      }
      assert.deepEqual(await liveFamilies(user.userId), []);
      const unanswered = [...kept, ...challenges.filter((_, i) => answers[i]?.status !== 200)].slice(0, late.length);
      for (const [i, c] of unanswered.entries()) {
        const r = await verify(app, c, late[i] ?? "");
        assert.equal(r.status, 401, "a challenge of before the change is dead, whatever the code");
      }
      assert.deepEqual(await liveFamilies(user.userId), []);
    });

    test("a challenge held open across a change is refused although its code is right", async () => {
      const user = await registerEnrolled(app, "cleo");
      const challenge = await challengeFor(app, "cleo");
      const before = await app.db.refreshFamily.count({ where: { userId: user.userId } });
      await app.db.user.update({ where: { id: user.userId }, data: { securityStamp: "moved by a credential change" } });
      const answer = await verify(app, challenge, freshCode(app, user.secret));
      assert.equal(answer.status, 401);
      assert.deepEqual(answer.body, REFUSAL);
      assert.equal(await app.db.refreshFamily.count({ where: { userId: user.userId } }), before, "no session was started");
    });
  });
}
