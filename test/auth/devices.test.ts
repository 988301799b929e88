/**
 * Trusted devices (login-service.md "Trusted device summary", the trusted-device transitions and
 * Sign-in rules 3-5, Account rules 15 and 18): trusting on verify, sign-in without a challenge,
 * rotation with a shrinking `device_expires_in`, expiry, the per-user cap, the list and its
 * `isCurrent`, revocation by id and in bulk, and every revocation event (password change and
 * reset, turning two-factor off) while sign-out leaves devices alone.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { providers } from "../harness/databases.ts";
import { decodePayload, PASSWORD, startAuthApp, type AuthTestApp, type TokenPair } from "./helpers.ts";
import { freshCode, loginWith, registerEnrolled, signInWithCode, type Enrolled } from "./twofactor-helpers.ts";

const DAY = 24 * 3600 * 1000;

interface DeviceSummary {
  id: string;
  label: string;
  userAgent: string;
  ipAddress: string;
  createdAt: string;
  lastUsedAt: string;
  expiresAt: string;
  isCurrent: boolean;
}

for (const provider of providers()) {
  describe(`trusted devices (${provider})`, () => {
    let app: AuthTestApp;
    before(async () => {
      app = await startAuthApp(provider, { TrustedDevices: { MaxDevicesPerUser: 3, IpAddressStorage: "Truncated" } });
    });
    after(async () => {
      assert.deepEqual(app.logs.leaks(app.secrets), []);
      await app.close();
    });

    async function deviceLogin(user: Enrolled, deviceToken: string, via: "body" | "header" = "body"): Promise<TokenPair> {
      const r = via === "body" ? await loginWith(app, user.userName, { deviceToken }) : await loginWith(app, user.userName, { headers: { "X-Toamaisutaa-Device": deviceToken } });
      assert.equal(r.status, 200, r.text);
      const pair = r.body as TokenPair;
      assert.ok(pair.access_token, `expected tokens, got ${r.text}`);
      if (pair.device_token) app.secrets.add(pair.device_token);
      return pair;
    }

    test("rememberDevice returns a device token; the device then skips the challenge and rotates its token", async () => {
      const user = await registerEnrolled(app, "Dora");
      const first = await signInWithCode(app, user, { rememberDevice: true, deviceLabel: "Dora's laptop", headers: { "user-agent": "x".repeat(400) } });
      assert.ok(first.device_token);
      assert.ok(Buffer.from(first.device_token, "base64url").length >= 32, "at least 256 bits");
      assert.equal(first.device_expires_in, 30 * 24 * 3600);
      const stored = await app.db.trustedDevice.findFirstOrThrow({ where: { userId: user.userId } });
      assert.notEqual(stored.tokenHash, first.device_token, "stored hashed");
      assert.equal(stored.label, "Dora's laptop");
      assert.equal(stored.userAgent?.length, 256, "user agent truncated");
      assert.equal(stored.ipAddress, "127.0.0.0", "Truncated: /24");

      app.clock.advance(3600_000);
      const second = await deviceLogin(user, first.device_token);
      assert.ok(second.device_token && second.device_token !== first.device_token, "rotated");
      const left = second.device_expires_in ?? 0;
      // One hour of the movable clock plus the real milliseconds the requests took.
      assert.ok(left <= 30 * 24 * 3600 - 3600 && left >= 30 * 24 * 3600 - 3660, `absolute lifetime, not extended: ${left}`);
      app.clock.advance(1000);
      const third = await deviceLogin(user, second.device_token, "header");
      assert.ok(third.device_expires_in !== null && second.device_expires_in !== null && third.device_expires_in < second.device_expires_in, "smaller on each rotation");
      assert.equal(third.recovery_codes_running_low, null);
    });

    test("a device without a label lists an empty one; list, isCurrent by header, delete one (404 foreign), delete all", async () => {
      const user = await registerEnrolled(app, "Lars");
      const a = await signInWithCode(app, user, { rememberDevice: true });
      const b = await signInWithCode(app, user, { rememberDevice: true, deviceLabel: "B" });
      const token = b.access_token;
      const list = await app.request("GET", "/auth/devices", { token, headers: { "X-Toamaisutaa-Device": a.device_token ?? "" } });
      assert.equal(list.status, 200);
      const devices = list.body as DeviceSummary[];
      assert.equal(devices.length, 2);
      const current = devices.filter((d) => d.isCurrent);
      assert.equal(current.length, 1);
      assert.equal(current[0]?.label, "", "never invented");
      assert.deepEqual(Object.keys(devices[0] ?? {}).sort(), ["createdAt", "expiresAt", "id", "ipAddress", "isCurrent", "label", "lastUsedAt", "userAgent"]);
      const d0 = devices[0];
      assert.ok(d0);
      assert.equal(new Date(d0.expiresAt).getTime() - new Date(d0.createdAt).getTime(), 30 * DAY);
      const none = await app.request("GET", "/auth/devices", { token });
      assert.ok((none.body as DeviceSummary[]).every((d) => !d.isCurrent), "no header: none current");

      const other = await registerEnrolled(app, "Mona");
      assert.equal((await app.request("DELETE", `/auth/devices/${current[0]?.id}`, { token: other.token })).status, 404, "foreign id");
      assert.equal((await app.request("DELETE", "/auth/devices/no-such-id", { token })).status, 404);
      assert.equal((await app.request("DELETE", `/auth/devices/${current[0]?.id}`, { token })).status, 204);
      assert.equal((await app.request("DELETE", `/auth/devices/${current[0]?.id}`, { token })).status, 404, "already revoked");
      const challenged = await loginWith(app, "Lars", { deviceToken: a.device_token ?? "" });
      assert.equal((challenged.body as { two_factor_required?: boolean }).two_factor_required, true);
      assert.equal((await app.request("DELETE", "/auth/devices", { token })).status, 204);
      assert.deepEqual((await app.request("GET", "/auth/devices", { token })).body, []);
    });

    test("expired devices need a live challenge", async () => {
      const user = await registerEnrolled(app, "Evan");
      const pair = await signInWithCode(app, user, { rememberDevice: true });
      app.clock.advance(30 * DAY + 1000);
      const r = await loginWith(app, "Evan", { deviceToken: pair.device_token ?? "" });
      assert.equal((r.body as { two_factor_required?: boolean }).two_factor_required, true);
    });

    test("MaxDevicesPerUser: the oldest beyond the cap is revoked", async () => {
      const user = await registerEnrolled(app, "Cap");
      const tokens: string[] = [];
      for (let i = 0; i < 4; i++) {
        tokens.push((await signInWithCode(app, user, { rememberDevice: true, deviceLabel: `d${i}` })).device_token ?? "");
        app.clock.advance(1000);
      }
      const live = await app.db.trustedDevice.findMany({ where: { userId: user.userId, revokedAt: null } });
      assert.deepEqual(live.map((d) => d.label).sort(), ["d1", "d2", "d3"]);
      const oldest = await loginWith(app, "Cap", { deviceToken: tokens[0] ?? "" });
      assert.equal((oldest.body as { two_factor_required?: boolean }).two_factor_required, true);
      await deviceLogin(user, tokens[3] ?? "");
    });

    test("sign-out leaves devices alone; password change, reset and turning two-factor off un-trust every device", async () => {
      const user = await registerEnrolled(app, "Ruth");
      let pair = await signInWithCode(app, user, { rememberDevice: true });
      const out = await app.request("POST", "/auth/logout", { body: { refreshToken: pair.refresh_token } });
      assert.equal(out.status, 204);
      pair = await deviceLogin(user, pair.device_token ?? "");

      const changed = await app.request("POST", "/auth/password", { token: pair.access_token, body: { currentPassword: PASSWORD, newPassword: PASSWORD + "!" } });
      assert.equal(changed.status, 204, changed.text);
      const afterChange = await app.request("POST", "/auth/login", { body: { identifier: "Ruth", password: PASSWORD + "!", deviceToken: pair.device_token } });
      assert.equal((afterChange.body as { two_factor_required?: boolean }).two_factor_required, true, "password change");

      // Reset: trust a device again, then reset the password through the mailed token.
      const challenge = afterChange.body as { challenge: string };
      app.secrets.add(challenge.challenge);
      const v = await app.request("POST", "/auth/2fa/verify", { body: { challenge: challenge.challenge, code: freshCode(app, user.secret), rememberDevice: true } });
      const trusted = v.body as TokenPair;
      app.secrets.add(trusted.device_token ?? "");
      await app.request("POST", "/auth/password/forgot", { body: { email: "ruth@example.com" } });
      let token: string | undefined;
      for (let i = 0; i < 50 && !token; i++) {
        await app.settle();
        token = app.mail.find((m) => m.userId === user.userId && m.token)?.token;
      }
      assert.ok(token, "reset mail");
      app.secrets.add(token);
      const reset = await app.request("POST", "/auth/password/reset", { body: { token, newPassword: PASSWORD } });
      assert.equal(reset.status, 204, reset.text);
      const afterReset = await loginWith(app, "Ruth", { deviceToken: trusted.device_token ?? "" });
      assert.equal((afterReset.body as { two_factor_required?: boolean }).two_factor_required, true, "password reset");

      const again = await signInWithCode(app, user, { rememberDevice: true });
      const off = await app.request("DELETE", "/auth/2fa", { token: again.access_token, body: { code: freshCode(app, user.secret) } });
      assert.equal(off.status, 204);
      assert.equal(await app.db.trustedDevice.count({ where: { userId: user.userId, revokedAt: null } }), 0, "two-factor off");
    });

    test("a device sign-in keeps mfa and the original second factor's time", async () => {
      const user = await registerEnrolled(app, "Tim");
      const pair = await signInWithCode(app, user, { rememberDevice: true });
      const original = decodePayload(pair.access_token).toa_2fa_at;
      app.clock.advance(DAY);
      const later = await deviceLogin(user, pair.device_token ?? "");
      const claims = decodePayload(later.access_token);
      assert.deepEqual(claims.amr, ["pwd", "mfa"]);
      assert.equal(claims.toa_2fa_source, "device");
      assert.equal(claims.toa_2fa_at, original);
    });
  });
}
