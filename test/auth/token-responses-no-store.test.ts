/**
 * RFC 6749 section 5.1: every response that carries tokens or other secrets (token pairs,
 * challenges, TOTP secrets, recovery codes, step-up tokens) sends `Cache-Control: no-store` and
 * `Pragma: no-cache`, so no browser or shared cache keeps a copy of a credential.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { providers } from "../harness/databases.ts";
import type { TestResponse } from "../harness/app.ts";
import { PASSWORD, startLifecycleApp, type LifecycleApp } from "./lifecycle-helpers.ts";
import { challengeFor, freshCode, verify } from "./twofactor-helpers.ts";

function assertNoStore(r: TestResponse, what: string): void {
  assert.ok(r.status < 300, `${what}: ${r.status} ${r.text}`);
  assert.equal(r.headers.get("cache-control"), "no-store", what);
  assert.equal(r.headers.get("pragma"), "no-cache", what);
}

for (const provider of providers()) {
  describe(`token responses are not cached (${provider})`, () => {
    let app: LifecycleApp;
    before(async () => {
      app = await startLifecycleApp(provider);
    });
    after(async () => {
      await app.close();
    });

    test("register, login, refresh, two-factor enrolment, challenge, verify and step-up send Cache-Control: no-store", async () => {
      const registered = await app.request("POST", "/auth/register", { body: { userName: "cache", email: "cache@example.com", password: PASSWORD } });
      assertNoStore(registered, "register");
      const login = await app.request("POST", "/auth/login", { body: { identifier: "cache", password: PASSWORD } });
      assertNoStore(login, "login");
      const token = (login.body as { access_token: string }).access_token;
      const refreshed = await app.request("POST", "/auth/refresh", { body: { refreshToken: (login.body as { refresh_token: string }).refresh_token } });
      assertNoStore(refreshed, "refresh");

      const enroll = await app.request("POST", "/auth/2fa/totp/enroll", { token, body: { currentPassword: PASSWORD } });
      assertNoStore(enroll, "totp enroll");
      const { secret } = enroll.body as { secret: string };
      const confirm = await app.request("POST", "/auth/2fa/totp/confirm", { token, body: { code: freshCode(app, secret), currentPassword: PASSWORD } });
      assertNoStore(confirm, "totp confirm");

      const challenge = await app.request("POST", "/auth/login", { body: { identifier: "cache", password: PASSWORD } });
      assertNoStore(challenge, "challenge");
      const pair = await verify(app, await challengeFor(app, "cache"), freshCode(app, secret));
      assertNoStore(pair, "2fa verify");
      const stepUp = await app.request("POST", "/auth/2fa/step-up", { token: (pair.body as { access_token: string }).access_token, body: { code: freshCode(app, secret) } });
      assertNoStore(stepUp, "step-up");
      const codes = await app.request("POST", "/auth/2fa/recovery-codes", { token: (pair.body as { access_token: string }).access_token, body: { code: freshCode(app, secret) } });
      assertNoStore(codes, "recovery codes");
    });

    test("the personal lists and a refusal are not cached either", async () => {
      const { pair } = await app.register("lists", "lists@example.com");
      assertNoStore(await app.request("GET", "/auth/sessions", { token: pair.access_token }), "sessions");
      assertNoStore(await app.request("GET", "/auth/devices", { token: pair.access_token }), "devices");
      const refused = await app.request("POST", "/auth/login", { body: { identifier: "lists", password: "not the password" } });
      assert.equal(refused.status, 401);
      assert.equal(refused.headers.get("cache-control"), "no-store");
    });

    test("magic-link verify and invitation completion send Cache-Control: no-store", async () => {
      await app.register("linked", "linked@example.com");
      assert.equal((await app.request("POST", "/auth/magic-link", { body: { email: "linked@example.com" } })).status, 204);
      const link = await app.next("magicLink");
      assertNoStore(await app.request("POST", "/auth/magic-link/verify", { body: { token: link.token } }), "magic-link verify");

      const admin = await app.adminToken();
      assert.equal((await app.request("POST", "/auth/invitations", { token: admin, body: { email: "invited@example.com" } })).status, 201);
      const invitation = await app.next("invitation");
      const completed = await app.request("POST", "/auth/invitations/complete", { body: { token: invitation.token, userName: "invited", password: PASSWORD } });
      assertNoStore(completed, "invitation complete");
    });
  });
}
