/**
 * Claims by sign-in kind (login-service.md, "Claims of a locally issued access token"): every row
 * of the table, decoded from the access token, and carried unchanged across refresh; `amr` only
 * grows; `toa_2fa_required` under TwoFactor:Enforce only for users without an enrolment.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { providers } from "../harness/databases.ts";
import { decodePayload, PASSWORD, startAuthApp, type AuthTestApp, type TokenPair } from "./helpers.ts";
import { challengeFor, freshCode, loginWith, registerEnrolled, signInWithCode, verify } from "./twofactor-helpers.ts";

const HOUR = 3600_000;

for (const provider of providers()) {
  describe(`claims of second-factor sign-ins (${provider})`, () => {
    let app: AuthTestApp;
    const unix = () => Math.floor(app.clock.now().getTime() / 1000);
    /** "now" of a token minted a moment ago: the movable clock runs on real time (a loaded machine is slow); the cases told apart are hours or days apart. */
    const isNow = (value: unknown, what: string) => assert.ok(typeof value === "number" && value <= unix() && value >= unix() - 60, `${what}: ${String(value)} is not now`);
    before(async () => {
      app = await startAuthApp(provider, { TwoFactor: { Enforce: true } });
    });
    after(async () => {
      assert.deepEqual(app.logs.leaks(app.secrets), []);
      await app.close();
    });

    async function refreshed(pair: TokenPair): Promise<Record<string, unknown>> {
      const r = await app.request("POST", "/auth/refresh", { body: { refreshToken: pair.refresh_token } });
      assert.equal(r.status, 200, r.text);
      return decodePayload((r.body as TokenPair).access_token);
    }

    test("password + one-time code: [pwd, otp, mfa], otp, now", async () => {
      const user = await registerEnrolled(app, "Ann");
      const pair = await signInWithCode(app, user);
      const claims = decodePayload(pair.access_token);
      assert.deepEqual(claims.amr, ["pwd", "otp", "mfa"]);
      assert.equal(claims.toa_2fa_source, "otp");
      isNow(claims.toa_2fa_at, "toa_2fa_at");
      assert.equal(claims.toa_2fa_required, undefined, "enrolled");
      app.clock.advance(HOUR);
      const after = await refreshed(pair);
      for (const key of ["amr", "toa_2fa_source", "toa_2fa_at", "toa_sid", "auth_time"]) assert.deepEqual(after[key], claims[key], key);
    });

    test("password + recovery code: [pwd, mfa], recovery, now", async () => {
      const user = await registerEnrolled(app, "Ben");
      const r = await verify(app, await challengeFor(app, "Ben"), user.recoveryCodes[0] ?? "");
      assert.equal(r.status, 200);
      const claims = decodePayload((r.body as TokenPair).access_token);
      assert.deepEqual(claims.amr, ["pwd", "mfa"]);
      assert.equal(claims.toa_2fa_source, "recovery");
      isNow(claims.toa_2fa_at, "toa_2fa_at");
    });

    test("password + trusted device: [pwd, mfa], device, time of the original live challenge; step-up: [pwd, mfa, otp], otp, now", async () => {
      const user = await registerEnrolled(app, "Cai");
      const trusted = await signInWithCode(app, user, { rememberDevice: true });
      const liveAt = decodePayload(trusted.access_token).toa_2fa_at;
      app.clock.advance(2 * 24 * HOUR);
      const r = await loginWith(app, "Cai", { deviceToken: trusted.device_token ?? "" });
      const pair = r.body as TokenPair;
      app.secrets.add(pair.device_token ?? "");
      const claims = decodePayload(pair.access_token);
      assert.deepEqual(claims.amr, ["pwd", "mfa"]);
      assert.equal(claims.toa_2fa_source, "device");
      assert.equal(claims.toa_2fa_at, liveAt);
      isNow(claims.auth_time, "auth_time: the password was typed now");

      // A second device sign-in (rotated token) still reports the ORIGINAL live challenge.
      app.clock.advance(HOUR);
      const again = (await loginWith(app, "Cai", { deviceToken: pair.device_token ?? "" })).body as TokenPair;
      app.secrets.add(again.device_token ?? "");
      const againClaims = decodePayload(again.access_token);
      assert.equal(againClaims.toa_2fa_at, liveAt);

      const up = await app.request("POST", "/auth/2fa/step-up", { token: again.access_token, body: { code: freshCode(app, user.secret) } });
      assert.equal(up.status, 200, up.text);
      const stepped = decodePayload((up.body as { access_token: string }).access_token);
      app.secrets.add((up.body as { access_token: string }).access_token);
      assert.deepEqual(stepped.amr, ["pwd", "mfa", "otp"]);
      assert.equal(stepped.toa_2fa_source, "otp");
      isNow(stepped.toa_2fa_at, "step-up toa_2fa_at");
      assert.equal(stepped.toa_sid, againClaims.toa_sid);
      const carried = await refreshed(again);
      assert.deepEqual(carried.amr, ["pwd", "mfa", "otp"], "amr only grows, across refresh");
      assert.equal(carried.toa_2fa_source, "otp");
    });

    test("TwoFactor:Enforce: toa_2fa_required until an enrolment is confirmed", async () => {
      const { pair } = await app.register("Dee", "dee@example.com");
      assert.equal(decodePayload(pair.access_token).toa_2fa_required, true);
      const plain = await app.login("Dee", PASSWORD);
      assert.equal(decodePayload((plain.body as TokenPair).access_token).toa_2fa_required, true);
      const start = await app.request("POST", "/auth/2fa/totp/enroll", { token: pair.access_token, body: { currentPassword: PASSWORD } });
      const secret = (start.body as { secret: string }).secret;
      app.secrets.add(secret);
      const confirm = await app.request("POST", "/auth/2fa/totp/confirm", { token: pair.access_token, body: { code: freshCode(app, secret), currentPassword: PASSWORD } });
      for (const c of (confirm.body as { recoveryCodes: string[] }).recoveryCodes) app.secrets.add(c);
      const r = await verify(app, await challengeFor(app, "Dee"), freshCode(app, secret));
      assert.equal(decodePayload((r.body as TokenPair).access_token).toa_2fa_required, undefined);
    });
  });
}
