/**
 * Attack: a stolen refresh token. Rotation makes every token single-use; presenting a rotated
 * token (the thief's copy or the victim's, whichever comes second) revokes the whole session so
 * the thief's chain dies too. Racing refreshes of one token must yield exactly one new pair.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { providers } from "../harness/databases.ts";
import { startAuthApp, PASSWORD, type AuthTestApp, type TokenPair } from "./helpers.ts";

for (const provider of providers()) {
  describe(`refresh-token rotation (${provider})`, () => {
    let app: AuthTestApp;
    before(async () => {
      app = await startAuthApp(provider);
    });
    after(async () => {
      assert.deepEqual(app.logs.leaks(app.secrets), []);
      await app.close();
    });

    const refresh = (token: string) => app.request("POST", "/auth/refresh", { body: { refreshToken: token } });

    test("reuse after three rotations revokes every token of the family, the newest included", async () => {
      const { pair } = await app.register("reuse1", "reuse1@example.com");
      const chain = [pair.refresh_token];
      for (let i = 0; i < 3; i += 1) {
        const r = await refresh(chain.at(-1) as string);
        assert.equal(r.status, 200);
        const next = r.body as TokenPair;
        assert.notEqual(next.refresh_token, chain.at(-1));
        chain.push(next.refresh_token);
      }
      const reused = await refresh(chain[1] as string);
      assert.equal(reused.status, 401);
      assert.deepEqual(reused.body, { error: "invalid_grant", error_description: "The credentials were not accepted." });
      for (const token of chain) assert.equal((await refresh(token)).status, 401, "every token of the revoked family is refused");
      assert.ok(app.logs.lines.some((l) => l.includes("refresh token reuse detected")), "reuse is logged loudly");
      const family = await app.db.refreshFamily.findFirstOrThrow({ where: { user: { credential: { userName: "reuse1" } } } });
      assert.equal(family.revokeReason, "refresh-token-reuse");
    });

    test("20 concurrent refreshes of one token: exactly one new pair, the rest refused and the family revoked", async () => {
      const { pair } = await app.register("race1", "race1@example.com");
      const results = await Promise.all(Array.from({ length: 20 }, () => refresh(pair.refresh_token)));
      const ok = results.filter((r) => r.status === 200);
      assert.equal(ok.length, 1);
      assert.equal(results.filter((r) => r.status === 401).length, 19);
      const winner = (ok[0]?.body as TokenPair).refresh_token;
      // The losers presented a rotated token: reuse, so the winner's pair dies with the family.
      assert.equal((await refresh(winner)).status, 401);
      const live = await app.db.refreshToken.count({ where: { family: { user: { credential: { userName: "race1" } } }, rotatedAt: null } });
      assert.equal(live, 1, "exactly one successor row was created");
    });

    test("logout answers 204 for known and unknown tokens and ends the session", async () => {
      const { pair } = await app.register("logout1", "logout1@example.com");
      assert.equal((await app.request("POST", "/auth/logout", { body: { refreshToken: "no-such-token" } })).status, 204);
      assert.equal((await app.request("POST", "/auth/logout", { body: { refreshToken: pair.refresh_token } })).status, 204);
      assert.equal((await refresh(pair.refresh_token)).status, 401);
    });

    test("a family past its absolute lifetime is refused although its token is fresh", async () => {
      await app.register("abs1", "abs1@example.com");
      let token = ((await app.login("abs1", PASSWORD)).body as TokenPair).refresh_token;
      // 13 days at a time keeps the sliding 14-day lifetime alive up to the 90-day cap.
      for (let day = 13; day < 90; day += 13) {
        app.clock.advance(13 * 86_400_000);
        const r = await refresh(token);
        assert.equal(r.status, 200, `refresh on day ${day}`);
        token = (r.body as TokenPair).refresh_token;
      }
      app.clock.advance(13 * 86_400_000);
      assert.equal((await refresh(token)).status, 401);
    });
  });

  describe(`refresh-token reuse interval (${provider})`, () => {
    let app: AuthTestApp;
    before(async () => {
      app = await startAuthApp(provider, { LocalLogin: { RefreshTokenReuseInterval: "00:00:30" } });
    });
    after(async () => {
      assert.deepEqual(app.logs.leaks(app.secrets), []);
      await app.close();
    });
    const refresh = (token: string) => app.request("POST", "/auth/refresh", { body: { refreshToken: token } });

    test("20 concurrent refreshes: one rotation, every retry gets the same live refresh token", async () => {
      const { pair } = await app.register("grace1", "grace1@example.com");
      const results = await Promise.all(Array.from({ length: 20 }, () => refresh(pair.refresh_token)));
      assert.deepEqual(results.map((r) => r.status), Array(20).fill(200));
      const tokens = new Set(results.map((r) => (r.body as TokenPair).refresh_token));
      assert.equal(tokens.size, 1);
      const live = [...tokens][0] as string;
      assert.equal((await refresh(live)).status, 200, "the shared successor is live");
    });

    test("a retry after the interval is reuse and revokes the family", async () => {
      const { pair } = await app.register("grace2", "grace2@example.com");
      const first = await refresh(pair.refresh_token);
      assert.equal(first.status, 200);
      app.clock.advance(31_000);
      assert.equal((await refresh(pair.refresh_token)).status, 401);
      assert.equal((await refresh((first.body as TokenPair).refresh_token)).status, 401);
    });
  });
}
