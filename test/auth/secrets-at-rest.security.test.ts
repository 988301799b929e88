/**
 * Attack: read second factors out of a stolen database. TOTP secrets were stored in the clear (a
 * copy of the table lets anyone generate the codes) and recovery codes as plain SHA-256 (49 bits
 * each, searchable offline in minutes). TOTP secrets are now sealed with AES-256-GCM under
 * `TwoFactor:SecretKey`, bound to their user, and recovery codes stored as HMAC under
 * `LocalLogin:Pepper`; both keys rotate like the peppers (a version, retired keys), and data
 * written before keeps working: old secrets are sealed at the next start, old codes still redeem.
 * The concurrency case races one recovery code across several challenges after the re-keying.
 */
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { after, describe, test } from "node:test";
import type { RawTree } from "../../control/config/sources.ts";
import { providers } from "../harness/databases.ts";
import { startAuthApp, type AuthTestApp } from "./helpers.ts";
import { challengeFor, freshCode, registerEnrolled, verify, type Enrolled } from "./twofactor-helpers.ts";

const KEY1 = randomBytes(32).toString("base64");
const KEY2 = randomBytes(32).toString("base64");
const HOUR = 3600_000;

const sha256 = (code: string): string => createHash("sha256").update(code.replace(/[\s-]/g, "").toLowerCase(), "utf8").digest("base64url");

for (const provider of providers()) {
  describe(`second-factor secrets at rest (${provider})`, () => {
    const apps: AuthTestApp[] = [];
    after(async () => {
      // The first app owns the database: close it last.
      for (const app of apps.reverse()) {
        assert.deepEqual(app.logs.leaks(app.secrets), []);
        await app.close();
      }
    });
    const start = async (config: RawTree, hours: number): Promise<AuthTestApp> => {
      const first = apps[0];
      const app = await startAuthApp(provider, first ? { ...config, server: { DATABASE_URL: first.config.server.DATABASE_URL } } : config);
      // Later apps run later: codes of steps the earlier ones used are spent.
      app.clock.advance(hours * HOUR);
      apps.push(app);
      return app;
    };
    const signInWith = async (app: AuthTestApp, user: Enrolled, code: string) => verify(app, await challengeFor(app, user.userName), code);

    test("legacy rows keep working, are sealed at the next start, and re-keyed at a rotation; codes race once", async () => {
      // 1. Before encryption: clear secret, SHA-256 codes.
      const legacyApp = await start({}, 0);
      const legacy = await registerEnrolled(legacyApp, "legacy");
      const legacyRow = await legacyApp.db.totpEnrollment.findUniqueOrThrow({ where: { userId: legacy.userId } });
      assert.equal(legacyRow.secret, legacy.secret, "(the old behaviour: stored in the clear)");
      const legacyCodes = await legacyApp.db.recoveryCode.findMany({ where: { userId: legacy.userId } });
      assert.ok(legacyCodes.some((c) => c.codeHash === sha256(legacy.recoveryCodes[0] ?? "")));

      // 2. Keys configured: the start seals the old secret; old secret and codes still work.
      const keyed = await start({ TwoFactor: { SecretKey: KEY1 }, LocalLogin: { Pepper: "pepper one", PepperVersion: 1 } }, 1);
      const sealed = await keyed.db.totpEnrollment.findUniqueOrThrow({ where: { userId: legacy.userId } });
      assert.match(sealed.secret, /^enc1\$1\$/);
      assert.ok(!sealed.secret.includes(legacy.secret));
      assert.equal((await signInWith(keyed, legacy, freshCode(keyed, legacy.secret))).status, 200, "the sealed secret still yields codes");
      assert.equal((await signInWith(keyed, legacy, legacy.recoveryCodes[0] ?? "")).status, 200, "a pre-pepper recovery code still redeems");
      const fresh = await registerEnrolled(keyed, "fresh");
      const freshRow = await keyed.db.totpEnrollment.findUniqueOrThrow({ where: { userId: fresh.userId } });
      assert.match(freshRow.secret, /^enc1\$1\$/);
      const freshCodes = await keyed.db.recoveryCode.findMany({ where: { userId: fresh.userId } });
      for (const row of freshCodes) assert.match(row.codeHash, /^h1\$/);
      for (const code of fresh.recoveryCodes) assert.ok(!freshCodes.some((row) => row.codeHash.includes(sha256(code))), "no unkeyed hash of a new code");

      // 3. Rotation: new key and pepper, the old ones retired. Every secret moves to the new key.
      const rotated = await start(
        { TwoFactor: { SecretKey: KEY2, SecretKeyVersion: 2, RetiredSecretKeys: { 1: KEY1 } }, LocalLogin: { Pepper: "pepper two", PepperVersion: 2, RetiredPeppers: { 1: "pepper one" } } },
        2,
      );
      for (const row of await rotated.db.totpEnrollment.findMany()) assert.match(row.secret, /^enc1\$2\$/);
      assert.equal((await signInWith(rotated, fresh, freshCode(rotated, fresh.secret))).status, 200, "re-sealed secret works");
      assert.equal((await signInWith(rotated, legacy, legacy.recoveryCodes[1] ?? "")).status, 200, "legacy code after rotation");

      // One code of the retired pepper raced over four challenges: exactly one sign-in.
      const challenges: string[] = [];
      for (let i = 0; i < 4; i += 1) challenges.push(await challengeFor(rotated, "fresh"));
      const racing = await Promise.all(challenges.map((c) => verify(rotated, c, fresh.recoveryCodes[0] ?? "")));
      assert.deepEqual(racing.map((r) => r.status).sort(), [200, 401, 401, 401]);

      // A sealed secret is bound to its user: copied into another row, it opens nowhere.
      const other = await rotated.db.totpEnrollment.findUniqueOrThrow({ where: { userId: fresh.userId } });
      await rotated.db.totpEnrollment.update({ where: { userId: legacy.userId }, data: { secret: other.secret, lastStep: 0 } });
      assert.equal((await signInWith(rotated, legacy, freshCode(rotated, fresh.secret))).status, 401, "the copied secret does not work for another user");
    });
  });
}
