/**
 * The housekeeping sweep's retention rule: expired rows go, but a rotated refresh row stays until
 * its family is past the absolute lifetime, so a replay is still detected as reuse.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { sweepExpired } from "../../control/auth/cleanup/sweep.ts";
import type { AuthContext } from "../../control/auth/context.ts";
import { providers } from "../harness/databases.ts";
import { contextOf, startAuthApp, type AuthTestApp, type TokenPair } from "./helpers.ts";

for (const provider of providers()) {
  describe(`cleanup sweep (${provider})`, () => {
    let app: AuthTestApp;
    let ctx: AuthContext;
    before(async () => {
      app = await startAuthApp(provider);
      ctx = contextOf(app, provider);
    });
    after(async () => {
      assert.deepEqual(app.logs.leaks(app.secrets), []);
      await app.close();
    });

    test("rotated rows outlive their own expiry until the family's absolute lifetime; reuse is still caught", async () => {
      const { userId, pair } = await app.register("sweep", "sweep@example.com");
      const r = await app.request("POST", "/auth/refresh", { body: { refreshToken: pair.refresh_token } });
      const live = (r.body as TokenPair).refresh_token;
      await app.db.singleUseToken.create({ data: { id: randomUUID(), kind: "password-reset", tokenHash: randomUUID(), userId, expiresAt: new Date(Date.now() + 3_600_000) } });

      app.clock.advance(15 * 86_400_000);
      const mid = await sweepExpired(ctx);
      assert.equal(mid.families, 0);
      assert.equal(mid.refreshTokens, 1, "the expired live token goes");
      assert.equal(mid.singleUseTokens, 1);
      assert.equal(await app.db.refreshToken.count({ where: { family: { userId }, rotatedAt: { not: null } } }), 1, "the rotated row stays");
      assert.equal((await app.request("POST", "/auth/refresh", { body: { refreshToken: pair.refresh_token } })).status, 401);
      assert.equal((await app.db.refreshFamily.findFirstOrThrow({ where: { userId } })).revokeReason, "refresh-token-reuse");
      assert.ok(live);

      app.clock.advance(76 * 86_400_000);
      const late = await sweepExpired(ctx);
      assert.equal(late.families, 1);
      assert.equal(await app.db.refreshToken.count({ where: { family: { userId } } }), 0);
    });
  });
}
