/**
 * Race: parallel "remember this device" answers must not leave more live devices than
 * `TrustedDevices:MaxDevicesPerUser` (login-service.md States: "more devices than MaxDevicesPerUser
 * → oldest revoked"). On PostgreSQL each trust counted the user's devices at READ COMMITTED and
 * could not see the others still open, so parallel trusts each stayed under the cap and none
 * revoked: the audit saw 11-14 live devices for a cap of 10, each still skipping the challenge
 * (audit F1). Trusts of one user now wait for each other (devices/cap-lock.ts). Checked at the
 * service (16 trusts at once: the widest overlap) and end to end as the audit did it.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Request } from "express";
import type { AuthContext } from "../../control/auth/context.ts";
import { trustDevice } from "../../control/auth/devices/trust.ts";
import { providers } from "../harness/databases.ts";
import { contextOf, startAuthApp, type AuthTestApp, type TokenPair } from "./helpers.ts";
import { challengeFor, freshCode, loginWith, registerEnrolled, verify } from "./twofactor-helpers.ts";

const CAP = 1;

for (const provider of providers()) {
  describe(`device cap under parallel trusts (${provider})`, () => {
    let app: AuthTestApp;
    before(async () => {
      app = await startAuthApp(provider, { TrustedDevices: { MaxDevicesPerUser: CAP } });
    });
    after(async () => {
      assert.deepEqual(app.logs.leaks(app.secrets), []);
      await app.close();
    });

    test("16 trusts of one user started at once leave exactly MaxDevicesPerUser live devices", async () => {
      const { userId } = await app.register("Burst", "burst@example.com");
      const ctx: AuthContext = contextOf(app, provider);
      const req = { headers: {}, ip: "127.0.0.1" } as unknown as Request;
      const stamp = (await app.db.user.findUniqueOrThrow({ where: { id: userId } })).securityStamp;
      const issued = await Promise.all(Array.from({ length: 16 }, () => trustDevice(ctx, { userId, label: null, req, twoFactorAt: app.clock.now(), stamp })));
      for (const d of issued) app.secrets.add(d.token);
      assert.equal(await app.db.trustedDevice.count({ where: { userId, revokedAt: null } }), CAP);
    });

    test("20 trusts answered 10 at a time leave at most MaxDevicesPerUser devices that skip the challenge", async () => {
      const user = await registerEnrolled(app, "Many");
      const deviceTokens: string[] = [];
      let codes = user.recoveryCodes;
      for (let round = 0; round < 2; round++) {
        // Challenges one by one, then every recovery code answers one of them at the same time.
        const challenges: string[] = [];
        for (const _ of codes) challenges.push(await challengeFor(app, user.userName));
        const answers = await Promise.all(codes.map((code, i) => verify(app, challenges[i] ?? "", code, { rememberDevice: true, deviceLabel: `r${round}d${i}` })));
        for (const r of answers) {
          assert.equal(r.status, 200, r.text);
          deviceTokens.push((r.body as TokenPair).device_token ?? "");
        }
        const regenerated = await app.request("POST", "/auth/2fa/recovery-codes", { token: user.token, body: { code: freshCode(app, user.secret) } });
        assert.equal(regenerated.status, 200, regenerated.text);
        codes = (regenerated.body as { recoveryCodes: string[] }).recoveryCodes;
        for (const c of codes) app.secrets.add(c);
      }
      const live = await app.db.trustedDevice.count({ where: { userId: user.userId, revokedAt: null } });
      assert.ok(live <= CAP, `live devices: ${live}, cap ${CAP}`);
      let skipping = 0;
      for (const deviceToken of deviceTokens) {
        const r = await loginWith(app, user.userName, { deviceToken });
        const pair = r.body as Partial<TokenPair>;
        if (pair.access_token) skipping++;
        if (pair.device_token) app.secrets.add(pair.device_token);
      }
      assert.ok(skipping >= 1 && skipping <= CAP, `device tokens that skip the challenge: ${skipping}`);
    });
  });
}
