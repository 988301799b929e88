/**
 * Two-factor endpoints under {prefix}/2fa (decisions.md "Auth decisions"): TOTP enrolment and
 * confirmation, the sign-in challenge and its answer, recovery codes (running low, regeneration),
 * turning two-factor off, and step-up of the same session.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { providers } from "../harness/databases.ts";
import { decodePayload, PASSWORD, startAuthApp, type AuthTestApp, type TokenPair } from "./helpers.ts";
import { challengeFor, codeAt, enrol, freshCode, loginWith, registerEnrolled, signInWithCode, verify } from "./twofactor-helpers.ts";

for (const provider of providers()) {
  describe(`two-factor endpoints (${provider})`, () => {
    let app: AuthTestApp;
    before(async () => {
      app = await startAuthApp(provider);
    });
    after(async () => {
      assert.deepEqual(app.logs.leaks(app.secrets), []);
      await app.close();
    });

    test("enrolment: pending until confirmed, re-enrolment replaces a pending secret, a confirmed one is 409", async () => {
      const { pair } = await app.register("Enid", "enid@example.com");
      const token = pair.access_token;
      const first = await app.request("POST", "/auth/2fa/totp/enroll", { token, body: { currentPassword: PASSWORD } });
      assert.equal(first.status, 200, first.text);
      const { secret, otpauthUri } = first.body as { secret: string; otpauthUri: string };
      app.secrets.add(secret);
      assert.match(secret, /^[A-Z2-7]{32}$/, "160-bit base32 secret");
      const uri = new URL(otpauthUri);
      assert.equal(uri.protocol, "otpauth:");
      assert.equal(uri.searchParams.get("secret"), secret);
      assert.equal(uri.searchParams.get("algorithm"), "SHA1");
      assert.equal(uri.searchParams.get("digits"), "6");
      assert.equal(uri.searchParams.get("period"), "30");

      // Pending: login still answers tokens.
      const before = await loginWith(app, "Enid");
      assert.equal((before.body as TokenPair).access_token !== undefined, true);

      const second = await app.request("POST", "/auth/2fa/totp/enroll", { token, body: { currentPassword: PASSWORD } });
      const replaced = (second.body as { secret: string }).secret;
      app.secrets.add(replaced);
      assert.notEqual(replaced, secret);
      const stale = await app.request("POST", "/auth/2fa/totp/confirm", { token, body: { code: freshCode(app, secret), currentPassword: PASSWORD } });
      assert.equal(stale.status, 400, "the replaced secret no longer confirms");

      const ok = await app.request("POST", "/auth/2fa/totp/confirm", { token, body: { code: freshCode(app, replaced), currentPassword: PASSWORD } });
      assert.equal(ok.status, 200, ok.text);
      const codes = (ok.body as { recoveryCodes: string[] }).recoveryCodes;
      for (const c of codes) app.secrets.add(c);
      assert.equal(codes.length, 10);
      assert.equal(new Set(codes).size, 10);
      const stored = await app.db.recoveryCode.findMany({});
      assert.ok(stored.every((row) => !codes.includes(row.codeHash)), "stored hashed");

      const again = await app.request("POST", "/auth/2fa/totp/enroll", { token, body: { currentPassword: PASSWORD } });
      assert.equal(again.status, 409);
      const challenge = await loginWith(app, "Enid");
      assert.equal((challenge.body as { two_factor_required: boolean }).two_factor_required, true);
    });

    test("a challenge has exactly the spec's fields and no tokens; a wrong code is 401 invalid_grant", async () => {
      await registerEnrolled(app, "Chas");
      const r = await loginWith(app, "Chas");
      assert.equal(r.status, 200);
      const body = r.body as Record<string, unknown>;
      app.secrets.add(String(body.challenge));
      assert.deepEqual(Object.keys(body).sort(), ["challenge", "expires_in", "two_factor_required"]);
      assert.equal(body.two_factor_required, true);
      assert.equal(body.expires_in, 300);
      const wrong = await verify(app, String(body.challenge), "000000");
      assert.equal(wrong.status, 401);
      assert.equal((wrong.body as { error: string }).error, "invalid_grant");
      const unknown = await verify(app, "no-such-challenge", "123456");
      assert.equal(unknown.status, 401);
    });

    test("an empty or oversized challenge or code is the collapsed 401 on /2fa/verify, not a 400", async () => {
      const user = await registerEnrolled(app, "Blanca");
      const challenge = await challengeFor(app, "Blanca");
      for (const [c, code] of [["", "123456"], [challenge, ""], [challenge, "   "], [challenge, "1".repeat(65)], ["", ""]] as const) {
        const r = await verify(app, c, code);
        assert.equal(r.status, 401, `${c.length}-char challenge, ${JSON.stringify(code.slice(0, 8))}`);
        assert.deepEqual(r.body, { error: "invalid_grant", error_description: "The credentials were not accepted." });
      }
      assert.equal((await verify(app, challenge, freshCode(app, user.secret))).status, 200, "the challenge was not spent by the refusals");
    });

    test("password + code: token pair with amr [pwd, otp, mfa] and the challenge is single use", async () => {
      const user = await registerEnrolled(app, "Olga");
      const challenge = await challengeFor(app, "Olga");
      const code = freshCode(app, user.secret);
      const r = await verify(app, challenge, code);
      assert.equal(r.status, 200, r.text);
      const pair = r.body as TokenPair;
      assert.equal(pair.recovery_codes_running_low, null);
      assert.equal(pair.device_token, null);
      assert.equal(pair.device_expires_in, null);
      assert.deepEqual(decodePayload(pair.access_token).amr, ["pwd", "otp", "mfa"]);
      const reused = await verify(app, challenge, freshCode(app, user.secret));
      assert.equal(reused.status, 401, "a used challenge is dead");
    });

    test("a code is accepted once: the same step on a new challenge is refused", async () => {
      const user = await registerEnrolled(app, "Rita");
      const code = freshCode(app, user.secret);
      assert.equal((await verify(app, await challengeFor(app, "Rita"), code)).status, 200);
      assert.equal((await verify(app, await challengeFor(app, "Rita"), code)).status, 401, "replayed code");
      const earlier = codeAt(user.secret, new Date(app.clock.now().getTime() - 30_000));
      assert.equal((await verify(app, await challengeFor(app, "Rita"), earlier)).status, 401, "an older step than the last accepted");
    });

    test("codes of the neighbouring steps are accepted, two steps away are not", async () => {
      const user = await registerEnrolled(app, "Nell");
      app.clock.advance(5 * 30_000);
      // Start of a step (+1 s): the server's clock stays in this step while the requests run.
      const ms = app.clock.now().getTime();
      app.clock.advance(30_000 - (ms % 30_000) + 1000);
      const now = app.clock.now().getTime();
      assert.equal((await verify(app, await challengeFor(app, "Nell"), codeAt(user.secret, new Date(now - 30_000)))).status, 200, "previous step");
      assert.equal((await verify(app, await challengeFor(app, "Nell"), codeAt(user.secret, new Date(now + 60_000)))).status, 401, "two steps ahead");
      assert.equal((await verify(app, await challengeFor(app, "Nell"), codeAt(user.secret, new Date(now + 30_000)))).status, 200, "next step");
    });

    test("recovery codes: each works once, amr [pwd, mfa], running low at 3 left, regeneration retires the old set", async () => {
      const user = await registerEnrolled(app, "Remy");
      const codes = [...user.recoveryCodes];
      for (let used = 1; used <= 7; used++) {
        const code = codes[used - 1] ?? "";
        const r = await verify(app, await challengeFor(app, "Remy"), code);
        assert.equal(r.status, 200, r.text);
        const pair = r.body as TokenPair;
        const claims = decodePayload(pair.access_token);
        assert.deepEqual(claims.amr, ["pwd", "mfa"]);
        assert.equal(claims.toa_2fa_source, "recovery");
        assert.equal(pair.recovery_codes_running_low, 10 - used <= 3 ? true : null, `after ${used} used`);
      }
      assert.equal((await verify(app, await challengeFor(app, "Remy"), codes[0] ?? "")).status, 401, "a used recovery code");
      const signedIn = await signInWithCode(app, user);
      assert.equal(signedIn.recovery_codes_running_low, true, "low also on a code sign-in");

      const wrong = await app.request("POST", "/auth/2fa/recovery-codes", { token: signedIn.access_token, body: { code: "000000" } });
      assert.equal(wrong.status, 400);
      const regen = await app.request("POST", "/auth/2fa/recovery-codes", { token: signedIn.access_token, body: { code: freshCode(app, user.secret) } });
      assert.equal(regen.status, 200, regen.text);
      const fresh = (regen.body as { recoveryCodes: string[] }).recoveryCodes;
      for (const c of fresh) app.secrets.add(c);
      assert.equal(fresh.length, 10);
      assert.equal((await verify(app, await challengeFor(app, "Remy"), codes[8] ?? "")).status, 401, "an old unused code stopped working");
      const r = await verify(app, await challengeFor(app, "Remy"), fresh[0] ?? "");
      assert.equal(r.status, 200);
      assert.equal((r.body as TokenPair).recovery_codes_running_low, null);
    });

    test("step-up: same session, amr grows, carried across refresh", async () => {
      const user = await registerEnrolled(app, "Stef");
      const pair = await signInWithCode(app, user);
      const sid = decodePayload(pair.access_token).toa_sid;
      const wrong = await app.request("POST", "/auth/2fa/step-up", { token: pair.access_token, body: { code: "000000" } });
      assert.equal(wrong.status, 400);
      app.clock.advance(60_000);
      const r = await app.request("POST", "/auth/2fa/step-up", { token: pair.access_token, body: { code: freshCode(app, user.secret) } });
      assert.equal(r.status, 200, r.text);
      const body = r.body as { access_token: string; token_type: string; expires_in: number };
      app.secrets.add(body.access_token);
      assert.deepEqual(Object.keys(body).sort(), ["access_token", "expires_in", "token_type"]);
      assert.equal(body.token_type, "Bearer");
      const claims = decodePayload(body.access_token);
      assert.equal(claims.toa_sid, sid);
      assert.equal(claims.toa_2fa_source, "otp");
      assert.ok(Math.abs(Number(claims.toa_2fa_at) - Math.floor(app.clock.now().getTime() / 1000)) <= 60, "toa_2fa_at is now");
      const refreshed = await app.request("POST", "/auth/refresh", { body: { refreshToken: pair.refresh_token } });
      assert.equal(refreshed.status, 200, refreshed.text);
      const after = decodePayload((refreshed.body as TokenPair).access_token);
      assert.equal(after.toa_sid, sid);
      assert.equal(after.toa_2fa_at, claims.toa_2fa_at);
      assert.deepEqual(after.amr, claims.amr);
    });

    test("turning two-factor off needs a code, un-trusts devices, and sign-in gives tokens again", async () => {
      const user = await registerEnrolled(app, "Otto");
      const pair = await signInWithCode(app, user, { rememberDevice: true });
      assert.ok(pair.device_token);
      const wrong = await app.request("DELETE", "/auth/2fa", { token: pair.access_token, body: { code: "000000" } });
      assert.equal(wrong.status, 400);
      const off = await app.request("DELETE", "/auth/2fa", { token: pair.access_token, body: { code: freshCode(app, user.secret) } });
      assert.equal(off.status, 204, off.text);
      const devices = await app.db.trustedDevice.findMany({ where: { userId: user.userId } });
      assert.ok(devices.length === 1 && devices.every((d) => d.revokedAt !== null));
      const r = await loginWith(app, "Otto");
      assert.ok((r.body as TokenPair).access_token, "no challenge once off");
      assert.equal(await app.db.recoveryCode.count({ where: { userId: user.userId } }), 0);
      // Enrolling again works from scratch.
      await enrol(app, (r.body as TokenPair).access_token);
    });
  });
}
