/**
 * Attack: replay a copied trusted-device token without the password, so the theft signal never
 * fires. Sign-in rule 3 says a spent device token revokes its device when presented; the check
 * ran only after a correct password (and only for the token's own account), so a thief probing
 * with the copied token and wrong or unknown credentials left the device trusted, and the owner
 * was never warned. Now any presentation of a spent token, with any password, any identifier, on
 * login or magic-link verify, revokes the device. Racing presentations revoke it once.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { providers } from "../harness/databases.ts";
import { startAuthApp, type AuthTestApp, type TokenPair } from "./helpers.ts";
import { loginWith, registerEnrolled, signInWithCode, type Enrolled } from "./twofactor-helpers.ts";

const isChallenge = (body: unknown): boolean => (body as { two_factor_required?: boolean }).two_factor_required === true;

for (const provider of providers()) {
  describe(`a spent device token revokes its device on any presentation (${provider})`, () => {
    let app: AuthTestApp;
    before(async () => {
      app = await startAuthApp(provider);
    });
    after(async () => {
      assert.deepEqual(app.logs.leaks(app.secrets), []);
      await app.close();
    });

    /** A trusted device whose first token was used once by the owner: [spent, current]. */
    async function rotatedDevice(user: Enrolled): Promise<{ spent: string; current: string }> {
      const first = await signInWithCode(app, user, { rememberDevice: true });
      const spent = first.device_token ?? "";
      const used = await loginWith(app, user.userName, { deviceToken: spent });
      assert.equal(used.status, 200);
      const current = (used.body as TokenPair).device_token ?? "";
      app.secrets.add(current);
      assert.ok(current !== "" && current !== spent);
      return { spent, current };
    }
    const deviceOf = (userId: string) => app.db.trustedDevice.findFirstOrThrow({ where: { userId } });

    for (const [name, attempt] of [
      ["a wrong password", (user: Enrolled, token: string) => app.request("POST", "/auth/login", { body: { identifier: user.userName, password: "not the password", deviceToken: token } })],
      ["an unknown account", (_user: Enrolled, token: string) => app.request("POST", "/auth/login", { body: { identifier: "nobody-at-all", password: "x", deviceToken: token } })],
      ["the header and no password", (user: Enrolled, token: string) => app.request("POST", "/auth/login", { body: { identifier: user.userName, password: "" }, headers: { "x-toamaisutaa-device": token } })],
    ] as const) {
      test(`with ${name}: refused, and the device is revoked`, async () => {
        const user = await registerEnrolled(app, `dev${name.replace(/\W/g, "")}`);
        const { spent, current } = await rotatedDevice(user);
        const r = await attempt(user, spent);
        assert.equal(r.status, 401);
        const device = await deviceOf(user.userId);
        assert.notEqual(device.revokedAt, null, "revoked");
        assert.equal(device.revokeReason, "token-reuse");
        const owner = await loginWith(app, user.userName, { deviceToken: current });
        assert.ok(isChallenge(owner.body), "the owner's current token no longer skips the challenge");
      });
    }

    test("racing replays of a spent token with wrong passwords against the owner's sign-in: the device ends revoked", async () => {
      const user = await registerEnrolled(app, "racer");
      const { spent, current } = await rotatedDevice(user);
      const [owner, ...replays] = await Promise.all([
        loginWith(app, "racer", { deviceToken: current }),
        // Three: with the owner's and the later sign-ins they stay within the lockout's budget of 5.
        ...Array.from({ length: 3 }, (_, i) => app.request("POST", "/auth/login", { body: { identifier: "racer", password: `guess ${i}`, deviceToken: spent } })),
      ]);
      for (const r of replays) assert.equal(r.status, 401);
      assert.equal(owner?.status, 200);
      const device = await deviceOf(user.userId);
      assert.notEqual(device.revokedAt, null);
      const after = await loginWith(app, "racer", { deviceToken: (owner?.body as TokenPair).device_token ?? current });
      assert.equal(after.status, 200, after.text);
      assert.ok(isChallenge(after.body), "no token of the device skips the challenge any more");
    });
  });
}
