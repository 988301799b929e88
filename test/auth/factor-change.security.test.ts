/**
 * Attack: plant or strip a second factor with a stolen access token. `/2fa/totp/enroll` and
 * `/confirm` needed only a bearer token, so a thief holding one enrolled their own TOTP; the planted
 * factor survives a password reset and locks the owner out with the attacker's code. Registering a
 * passkey for an account without a factor and deleting a passkey had the same hole. Every change of
 * a second factor now needs proof of presence: `currentPassword` (counted toward the account
 * lockout, so the stolen token cannot be used to guess it), or a live second factor within
 * `TwoFactor:FreshnessWindow` when one is enrolled; 400 `{errors}` otherwise. Deleting a passkey
 * also un-trusts the devices trusted through it. Turning two-factor off already needs a live code.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { providers } from "../harness/databases.ts";
import { PASSWORD, startAuthApp, type AuthTestApp, type TokenPair } from "./helpers.ts";
import { softPasskey, type SoftPasskey } from "./soft-authenticator.ts";
import { challengeFor, freshCode, registerEnrolled, signInWithCode } from "./twofactor-helpers.ts";

const ORIGIN = "http://localhost:8000";
const FRESHNESS_MS = 5 * 60_000;

for (const provider of providers()) {
  describe(`second-factor changes need proof of presence (${provider})`, () => {
    let app: AuthTestApp;
    before(async () => {
      app = await startAuthApp(provider, { Passkeys: { RpId: "localhost", Origins: [ORIGIN] } });
    });
    after(async () => {
      assert.deepEqual(app.logs.leaks(app.secrets), []);
      await app.close();
    });

    const errorsOf = (body: unknown): string[] => {
      const errors = (body as { errors?: unknown }).errors;
      assert.ok(Array.isArray(errors) && errors.length > 0, `expected {errors}: ${JSON.stringify(body)}`);
      return errors as string[];
    };

    test("a stolen token alone cannot start or confirm a TOTP enrolment; the password can", async () => {
      const { userId, pair } = await app.register("tina", "tina@example.com");
      const stolen = pair.access_token;
      const planted = await app.request("POST", "/auth/2fa/totp/enroll", { token: stolen });
      assert.equal(planted.status, 400);
      errorsOf(planted.body);
      assert.equal(await app.db.totpEnrollment.count({ where: { userId } }), 0, "nothing planted");

      const wrong = await app.request("POST", "/auth/2fa/totp/enroll", { token: stolen, body: { currentPassword: "not the password" } });
      assert.equal(wrong.status, 400);
      assert.equal((await app.db.passwordCredential.findUniqueOrThrow({ where: { userId } })).failedCount, 1, "a wrong password counts toward the lockout");

      const started = await app.request("POST", "/auth/2fa/totp/enroll", { token: stolen, body: { currentPassword: PASSWORD } });
      assert.equal(started.status, 200, started.text);
      const { secret } = started.body as { secret: string };
      app.secrets.add(secret);
      const noProof = await app.request("POST", "/auth/2fa/totp/confirm", { token: stolen, body: { code: freshCode(app, secret) } });
      assert.equal(noProof.status, 400, "confirmation needs the proof too");
      assert.equal((await app.db.totpEnrollment.findUniqueOrThrow({ where: { userId } })).confirmedAt, null);
      const confirmed = await app.request("POST", "/auth/2fa/totp/confirm", { token: stolen, body: { code: freshCode(app, secret), currentPassword: PASSWORD } });
      assert.equal(confirmed.status, 200, confirmed.text);
      for (const c of (confirmed.body as { recoveryCodes: string[] }).recoveryCodes) app.secrets.add(c);
    });

    test("racing stolen-token enrolments with guessed passwords: none succeeds, the lockout stops the guessing", async () => {
      const { userId, pair } = await app.register("rita", "rita@example.com");
      const results = await Promise.all([
        ...Array.from({ length: 10 }, () => app.request("POST", "/auth/2fa/totp/enroll", { token: pair.access_token })),
        ...Array.from({ length: 20 }, (_, i) => app.request("POST", "/auth/2fa/totp/enroll", { token: pair.access_token, body: { currentPassword: `guess ${i}` } })),
      ]);
      assert.deepEqual(new Set(results.map((r) => r.status)), new Set([400]));
      assert.equal(await app.db.totpEnrollment.count({ where: { userId } }), 0);
      const credential = await app.db.passwordCredential.findUniqueOrThrow({ where: { userId } });
      assert.equal(credential.failedCount, 5, "exactly MaxFailedAttempts guesses were checked");
      assert.ok(credential.lockedUntil, "then the account locked");
      const locked = await app.request("POST", "/auth/2fa/totp/enroll", { token: pair.access_token, body: { currentPassword: PASSWORD } });
      assert.equal(locked.status, 400, "while locked even the right password is refused");
    });

    async function registerPasskey(token: string, proof: { currentPassword?: string }): Promise<{ status: number; id?: string; key: SoftPasskey }> {
      const key = softPasskey(ORIGIN, "localhost");
      const options = await app.request("POST", "/auth/passkeys/registration/options", { token, body: proof });
      if (options.status !== 200) return { status: options.status, key };
      const done = await app.request("POST", "/auth/passkeys/registration/verify", { token, body: { response: key.register(options.body as { challenge: string }), ...proof } });
      return { status: done.status, id: (done.body as { id?: string }).id, key };
    }

    test("a passkey cannot be planted with a stolen token; a stale token needs a step-up or the password", async () => {
      const { userId, pair } = await app.register("pete", "pete@example.com");
      const planted = await registerPasskey(pair.access_token, {});
      assert.equal(planted.status, 400);
      assert.equal(await app.db.passkey.count({ where: { userId } }), 0);

      const user = await registerEnrolled(app, "petra");
      const session = await signInWithCode(app, user);
      app.clock.advance(FRESHNESS_MS + 60_000);
      assert.equal((await registerPasskey(session.access_token, {})).status, 400, "second factor no longer fresh");
      const stepUp = await app.request("POST", "/auth/2fa/step-up", { token: session.access_token, body: { code: freshCode(app, user.secret) } });
      assert.equal(stepUp.status, 200, stepUp.text);
      const fresh = (stepUp.body as { access_token: string }).access_token;
      app.secrets.add(fresh);
      const registered = await registerPasskey(fresh, {});
      assert.equal(registered.status, 201);
      assert.equal(await app.db.passkey.count({ where: { userId: user.userId } }), 1);
    });

    test("deleting a passkey needs proof and un-trusts exactly the devices trusted through it", async () => {
      const user = await registerEnrolled(app, "dora");
      const { key, id } = await registerPasskey(user.token, { currentPassword: PASSWORD });
      assert.ok(id);
      // One device trusted through the passkey, one through a TOTP code.
      const challenge = await challengeFor(app, "dora");
      const options = await app.request("POST", "/auth/2fa/passkey/options", { body: { challenge } });
      const viaPasskey = await app.request("POST", "/auth/2fa/passkey/verify", {
        body: { challenge, response: key.assert(options.body as { challenge: string }), rememberDevice: true },
      });
      assert.equal(viaPasskey.status, 200, viaPasskey.text);
      const passkeyPair = viaPasskey.body as TokenPair;
      app.secrets.add(passkeyPair.access_token).add(passkeyPair.refresh_token).add(passkeyPair.device_token ?? "");
      const viaCode = await signInWithCode(app, user, { rememberDevice: true });
      app.secrets.add(viaCode.device_token ?? "");

      app.clock.advance(FRESHNESS_MS + 60_000);
      const stale = await app.request("DELETE", `/auth/passkeys/${id}`, { token: passkeyPair.access_token });
      assert.equal(stale.status, 400);
      errorsOf(stale.body);
      assert.equal(await app.db.passkey.count({ where: { id } }), 1, "the owner's passkey stays");

      const [deleted, twice] = await Promise.all([
        app.request("DELETE", `/auth/passkeys/${id}`, { token: passkeyPair.access_token, body: { currentPassword: PASSWORD } }),
        app.request("DELETE", `/auth/passkeys/${id}`, { token: passkeyPair.access_token, body: { currentPassword: PASSWORD } }),
      ]);
      assert.deepEqual([deleted.status, twice.status].sort(), [204, 404], "one deletion wins the race");
      const devices = await app.db.trustedDevice.findMany({ where: { userId: user.userId }, orderBy: { createdAt: "asc" } });
      const throughPasskey = devices.filter((d) => d.passkeyId === id);
      const throughCode = devices.filter((d) => d.passkeyId === null);
      assert.equal(throughPasskey.length, 1);
      assert.equal(throughPasskey[0]?.revokeReason, "passkey-deleted");
      assert.equal(throughCode.length, 1);
      assert.equal(throughCode[0]?.revokedAt, null, "the device trusted through the code stays trusted");
    });

    test("turning two-factor off with a stolen token alone is refused", async () => {
      const user = await registerEnrolled(app, "otto");
      const off = await app.request("DELETE", "/auth/2fa", { token: user.token, body: {} });
      assert.equal(off.status, 400);
      const guessed = await app.request("DELETE", "/auth/2fa", { token: user.token, body: { code: "000000" } });
      assert.equal(guessed.status, 400);
      assert.ok((await app.db.totpEnrollment.findUniqueOrThrow({ where: { userId: user.userId } })).confirmedAt);
    });
  });
}
