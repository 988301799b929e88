/**
 * Black-box conformance of the identity service's wire (login-service.md, decisions.md "Auth
 * decisions"): exact field sets of the token pair, the challenge and the session summary; the
 * "always 204" endpoints (logout, forgot, magic-link request) answer 204 for every input,
 * including a missing or ill-typed field; an unknown token of any length is the collapsed 401,
 * never a 400; an ill-typed field is named as such; and the endpoint prefixes move every route.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { providers } from "../harness/databases.ts";
import { localToken } from "./helpers.ts";
import { PASSWORD, startLifecycleApp, type LifecycleApp } from "./lifecycle-helpers.ts";
import { challengeFor, registerEnrolled, signInWithCode } from "./twofactor-helpers.ts";

const TOKEN_PAIR_KEYS = ["access_token", "device_expires_in", "device_token", "expires_in", "recovery_codes_running_low", "refresh_token", "token_type"];
const SESSION_KEYS = ["authenticationMethods", "createdAt", "expiresAt", "id", "ipAddress", "isCurrent", "lastUsedAt", "userAgent"];
const DEVICE_KEYS = ["createdAt", "expiresAt", "id", "ipAddress", "isCurrent", "label", "lastUsedAt", "userAgent"];
/** ISO 8601 with an offset (`Z` or `±hh:mm`). */
const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const INVALID_GRANT = { error: "invalid_grant", error_description: "The credentials were not accepted." };

const sorted = (o: unknown): string[] => Object.keys(o as object).sort();

for (const provider of providers()) {
  describe(`conformance (${provider})`, () => {
    let app: LifecycleApp;
    before(async () => {
      app = await startLifecycleApp(provider);
    });
    after(async () => {
      app.assertNoLeaks();
      await app.close();
    });

    test("token pair, challenge and session summary carry exactly the spec's fields", async () => {
      const { pair } = await app.register("shape", "shape@example.com");
      assert.deepEqual(sorted(pair), TOKEN_PAIR_KEYS);
      assert.equal(pair.token_type, "Bearer");
      assert.equal(pair.recovery_codes_running_low, null);
      assert.equal(pair.device_token, null);
      assert.equal(pair.device_expires_in, null);
      assert.ok(Number.isInteger(pair.expires_in) && pair.expires_in > 0);

      const sessions = await app.request("GET", "/auth/sessions", { token: pair.access_token });
      assert.equal(sessions.status, 200);
      const [summary] = sessions.body as Record<string, unknown>[];
      assert.deepEqual(sorted(summary), SESSION_KEYS);
      for (const key of ["createdAt", "lastUsedAt", "expiresAt"]) assert.match(String(summary?.[key]), ISO_WITH_OFFSET, key);
      assert.deepEqual(summary?.authenticationMethods, ["pwd"]);
      assert.equal(summary?.isCurrent, true);

      const enrolled = await registerEnrolled(app, "shape2fa");
      const challenge = await app.request("POST", "/auth/login", { body: { identifier: enrolled.userName, password: PASSWORD } });
      assert.equal(challenge.status, 200);
      assert.deepEqual(sorted(challenge.body), ["challenge", "expires_in", "two_factor_required"]);
      assert.equal((challenge.body as { two_factor_required: unknown }).two_factor_required, true);

      const trusted = await signInWithCode(app, enrolled, { rememberDevice: true, deviceLabel: "laptop" });
      assert.deepEqual(sorted(trusted), TOKEN_PAIR_KEYS);
      assert.equal(typeof trusted.device_token, "string");
      const devices = await app.request("GET", "/auth/devices", { token: trusted.access_token, headers: { "X-Toamaisutaa-Device": trusted.device_token ?? "" } });
      const [device] = devices.body as Record<string, unknown>[];
      assert.deepEqual(sorted(device), DEVICE_KEYS);
      assert.equal(device?.label, "laptop");
      assert.equal(device?.isCurrent, true);
    });

    test("logout, forgot and magic-link answer 204 for every input, also a missing or ill-typed field", async () => {
      for (const path of ["/auth/logout", "/auth/password/forgot", "/auth/magic-link"]) {
        for (const body of [{}, { refreshToken: 5, email: 5 }, { refreshToken: null, email: null }, { refreshToken: "x".repeat(5000), email: "not-an-email" }, []]) {
          const r = await app.request("POST", path, { body });
          assert.equal(r.status, 204, `${path} ${JSON.stringify(body).slice(0, 60)}: ${r.text}`);
        }
      }
    });

    test("an unknown refresh token or challenge of any length is the collapsed 401, never a 400", async () => {
      for (const refreshToken of ["", "unknown", "x".repeat(600), "x".repeat(5000)]) {
        const r = await app.request("POST", "/auth/refresh", { body: { refreshToken } });
        assert.equal(r.status, 401, `${refreshToken.length} chars`);
        assert.deepEqual(r.body, INVALID_GRANT);
      }
      const enrolled = await registerEnrolled(app, "longchallenge");
      await challengeFor(app, "longchallenge");
      for (const challenge of ["unknown", "x".repeat(600)]) {
        const r = await app.request("POST", "/auth/2fa/verify", { body: { challenge, code: "123456" } });
        assert.equal(r.status, 401, `${challenge.length} chars`);
        assert.deepEqual(r.body, INVALID_GRANT);
      }
      assert.ok(enrolled.secret);
    });

    test("a missing field is 'required', an ill-typed one says what it must be (400 errors); unknown fields are ignored", async () => {
      const missing = await app.request("POST", "/auth/register", { body: { userName: "typed", email: "typed@example.com" } });
      assert.equal(missing.status, 400);
      assert.deepEqual(missing.body, { errors: ["password is required."] });
      const wrongType = await app.request("POST", "/auth/register", { body: { userName: "typed", email: "typed@example.com", password: 12345678 } });
      assert.equal(wrongType.status, 400);
      assert.deepEqual(wrongType.body, { errors: ["password must be a string."] });
      const array = await app.request("POST", "/auth/register", { body: [] });
      assert.equal(array.status, 400);
      assert.deepEqual(array.body, { errors: ["The request body must be a JSON object."] });
      const extra = await app.request("POST", "/auth/register", { body: { userName: "typed", email: "typed@example.com", password: PASSWORD, unknown: true } });
      assert.equal(extra.status, 201);
    });

    test("login, refresh and /2fa/verify answer only 200 or 401: a missing or ill-typed credential is the collapsed 401", async () => {
      await app.register("untyped", "untyped@example.com");
      for (const body of [{ identifier: "untyped" }, { password: PASSWORD }, {}, { identifier: "untyped", password: 12345678 }, { identifier: ["untyped"], password: PASSWORD }]) {
        const r = await app.request("POST", "/auth/login", { body });
        assert.equal(r.status, 401, JSON.stringify(body));
        assert.deepEqual(r.body, INVALID_GRANT);
      }
      // An ill-typed device token is no device token: the sign-in itself still succeeds.
      const withBadDevice = await app.request("POST", "/auth/login", { body: { identifier: "untyped", password: PASSWORD, deviceToken: 5 } });
      assert.equal(withBadDevice.status, 200, withBadDevice.text);
      for (const body of [{}, { refreshToken: 5 }, { refreshToken: null }, { refreshToken: ["x"] }]) {
        const r = await app.request("POST", "/auth/refresh", { body });
        assert.equal(r.status, 401, JSON.stringify(body));
        assert.deepEqual(r.body, INVALID_GRANT);
      }
      await registerEnrolled(app, "untypedchallenge");
      const challenge = await challengeFor(app, "untypedchallenge");
      for (const body of [{ challenge }, { code: "123456" }, { challenge, code: 123456 }, { challenge: 5, code: "123456" }]) {
        const r = await app.request("POST", "/auth/2fa/verify", { body });
        assert.equal(r.status, 401, JSON.stringify(body));
        assert.deepEqual(r.body, INVALID_GRANT);
      }
    });

    test("a path written in another case reaches the auth routes and keeps the auth bodies", async () => {
      // Express routes without regard to case; the error shape must follow the same rule.
      const refused = await app.request("POST", "/AUTH/login", { body: { identifier: "nobody", password: PASSWORD } });
      assert.equal(refused.status, 401);
      assert.deepEqual(refused.body, INVALID_GRANT);
      const anonymous = await app.request("GET", "/Auth/Sessions");
      assert.equal(anonymous.status, 401);
      assert.equal((anonymous.body as { error: string }).error, "invalid_token");
      const unknown = await app.request("GET", "/AUTH/no-such-route");
      assert.equal(unknown.status, 404);
      assert.equal((unknown.body as { error: string }).error, "not_found");
    });

    test("login with an empty identifier or password is the collapsed 401, not a 400", async () => {
      await app.register("blank", "blank@example.com");
      for (const body of [{ identifier: "blank", password: "" }, { identifier: "", password: PASSWORD }, { identifier: "", password: "" }]) {
        const r = await app.request("POST", "/auth/login", { body });
        assert.equal(r.status, 401, JSON.stringify(body));
        assert.deepEqual(r.body, INVALID_GRANT);
      }
    });
    test("POST /auth/password: currentPassword null is the first-password form, like omitting it", async () => {
      const userId = randomUUID();
      await app.db.user.create({ data: { id: userId, securityStamp: randomUUID(), externalIssuer: "https://idp.example", externalSubject: "null-form", externalHandle: "nullform" } });
      const token = await localToken({ sub: userId, auth_time: Math.floor(app.clock.now().getTime() / 1000) - 10 });
      const r = await app.request("POST", "/auth/password", { token, body: { currentPassword: null, newPassword: "nullform's first password" } });
      assert.equal(r.status, 204, r.text);
      assert.equal((await app.login("nullform", "nullform's first password")).status, 200);
    });
  });

  describe(`an endpoint prefix written without its leading slash, or with a trailing one, keeps the auth error bodies (${provider})`, () => {
    for (const prefix of ["identity", "/identity/"]) {
      test(`LocalLogin:EndpointPrefix "${prefix}"`, async (t) => {
        const app = await startLifecycleApp(provider, { config: { LocalLogin: { EndpointPrefix: prefix } } });
        t.after(() => app.close());
        const refused = await app.request("POST", "/identity/login", { body: { identifier: "nobody", password: PASSWORD } });
        assert.equal(refused.status, 401);
        assert.deepEqual(refused.body, INVALID_GRANT);
        const anonymous = await app.request("GET", "/identity/sessions");
        assert.equal(anonymous.status, 401);
        assert.equal((anonymous.body as { error: string }).error, "invalid_token");
      });
    }
  });

  describe(`endpoint prefixes move every route (${provider})`, () => {
    let app: LifecycleApp;
    before(async () => {
      app = await startLifecycleApp(provider, {
        config: { LocalLogin: { EndpointPrefix: "/identity", SessionEndpointPrefix: "/my-sessions" }, TrustedDevices: { EndpointPrefix: "/my-devices" } },
      });
    });
    after(async () => {
      await app.close();
    });

    test("register, login, refresh, sessions, devices, 2fa, forgot and logout live under /identity; /auth is gone", async () => {
      const reg = await app.request("POST", "/identity/register", { body: { userName: "moved", email: "moved@example.com", password: PASSWORD } });
      assert.equal(reg.status, 201, reg.text);
      const login = await app.request("POST", "/identity/login", { body: { identifier: "moved", password: PASSWORD } });
      assert.equal(login.status, 200);
      const pair = login.body as { access_token: string; refresh_token: string };
      assert.equal((await app.request("GET", "/identity/my-sessions", { token: pair.access_token })).status, 200);
      assert.equal((await app.request("GET", "/identity/my-devices", { token: pair.access_token })).status, 200);
      assert.equal((await app.request("POST", "/identity/2fa/totp/enroll", { token: pair.access_token, body: { currentPassword: PASSWORD } })).status, 200);
      assert.equal((await app.request("POST", "/identity/password/forgot", { body: { email: "moved@example.com" } })).status, 204);
      const refreshed = await app.request("POST", "/identity/refresh", { body: { refreshToken: pair.refresh_token } });
      assert.equal(refreshed.status, 200);
      assert.equal((await app.request("POST", "/identity/logout", { body: { refreshToken: (refreshed.body as { refresh_token: string }).refresh_token } })).status, 204);

      for (const [method, path] of [
        ["POST", "/auth/login"],
        ["POST", "/auth/register"],
        ["GET", "/auth/sessions"],
        ["GET", "/identity/sessions"],
        ["GET", "/identity/devices"],
        ["POST", "/auth/2fa/verify"],
        ["POST", "/auth/password/forgot"],
      ] as const) {
        assert.equal((await app.request(method, path, { token: pair.access_token, ...(method === "POST" ? { body: {} } : {}) })).status, 404, `${method} ${path}`);
      }
    });
  });
}
