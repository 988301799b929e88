/**
 * Session listing and revocation (login-service.md "Session summary", Account rules 15 and 17):
 * summaries exactly as the spec's table, expired sessions not listed, the caller's session marked
 * current, 404 for another user's id, bulk revocation keeping the caller's session, one
 * `session-revoked` audit event per family, and address storage per IpAddressStorage.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { storedAddress } from "../../control/auth/sessions/client-info.ts";
import { providers } from "../harness/databases.ts";
import { localToken, startAuthApp, PASSWORD, type AuthTestApp, type TokenPair } from "./helpers.ts";

interface Summary {
  id: string;
  userAgent: string;
  ipAddress: string;
  createdAt: string;
  lastUsedAt: string;
  expiresAt: string;
  authenticationMethods: string[];
  isCurrent: boolean;
}

test("address storage: None, Truncated (/24, /48) and Full", () => {
  assert.equal(storedAddress("203.0.113.77", "None"), null);
  assert.equal(storedAddress("203.0.113.77", "Truncated"), "203.0.113.0");
  assert.equal(storedAddress("::ffff:203.0.113.77", "Truncated"), "203.0.113.0");
  assert.equal(storedAddress("2001:db8:abcd:12::1", "Truncated"), "2001:db8:abcd::");
  assert.equal(storedAddress("2001:db8::1", "Truncated"), "2001:db8:0::");
  assert.equal(storedAddress("2001:db8::1", "Full"), "2001:db8::1");
});

for (const provider of providers()) {
  describe(`sessions (${provider})`, () => {
    let app: AuthTestApp;
    before(async () => {
      app = await startAuthApp(provider, { LocalLogin: { IpAddressStorage: "Truncated" } });
    });
    after(async () => {
      assert.deepEqual(app.logs.leaks(app.secrets), []);
      await app.close();
    });

    const loginAs = async (userName: string, userAgent: string) =>
      (await app.request("POST", "/auth/login", { body: { identifier: userName, password: PASSWORD }, headers: { "user-agent": userAgent } })).body as TokenPair;

    test("list: exact fields, current session, truncated agent and address, expired ones hidden", async () => {
      await app.register("sam", "sam@example.com");
      const a = await loginAs("sam", "A".repeat(300));
      const b = await loginAs("sam", "Browser B");
      const r = await app.request("GET", "/auth/sessions", { token: b.access_token });
      assert.equal(r.status, 200);
      const list = r.body as Summary[];
      assert.equal(list.length, 3, "registration, A and B");
      for (const s of list) {
        assert.deepEqual(Object.keys(s).sort(), ["authenticationMethods", "createdAt", "expiresAt", "id", "ipAddress", "isCurrent", "lastUsedAt", "userAgent"]);
        assert.match(s.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/);
        assert.deepEqual(s.authenticationMethods, ["pwd"]);
      }
      assert.deepEqual(list.filter((s) => s.isCurrent).map((s) => s.userAgent), ["Browser B"]);
      assert.equal(list.find((s) => s.userAgent.startsWith("A"))?.userAgent.length, 256);
      assert.equal(list[0]?.ipAddress, "127.0.0.0");
      assert.ok(a.access_token);

      // 14 days later, the sliding lifetime has run out for all three: none listed.
      app.clock.advance(14 * 86_400_000 + 1000);
      const later = await app.request("GET", "/auth/sessions", { token: await localToken({ sub: (await app.db.passwordCredential.findFirstOrThrow({ where: { userName: "sam" } })).userId }, { at: app.clock.now() }) });
      assert.deepEqual(later.body, []);
    });

    test("delete one: 204 and one audit event; unknown or foreign ids answer 404", async () => {
      const { userId } = await app.register("dana", "dana@example.com");
      const other = await app.register("eve", "eve@example.com");
      const mine = await loginAs("dana", "d");
      const sessions = (await app.request("GET", "/auth/sessions", { token: mine.access_token })).body as Summary[];
      const target = sessions.find((s) => !s.isCurrent)?.id as string;
      const before = app.audits.length;
      const results = await Promise.all(Array.from({ length: 5 }, () => app.request("DELETE", `/auth/sessions/${target}`, { token: mine.access_token })));
      assert.deepEqual(results.map((r) => r.status).sort(), [204, 404, 404, 404, 404], "revoked once");
      const events = app.audits.slice(before);
      assert.deepEqual(events, [{ audit: "session-revoked", userId, familyId: target, reason: "revoked-by-user" }]);
      assert.equal((await app.request("DELETE", "/auth/sessions/does-not-exist", { token: mine.access_token })).status, 404);
      const foreign = (await app.request("GET", "/auth/sessions", { token: other.pair.access_token })).body as Summary[];
      const foreignId = foreign[0]?.id as string;
      const refused = await app.request("DELETE", `/auth/sessions/${foreignId}`, { token: mine.access_token });
      assert.equal(refused.status, 404);
      assert.equal((await app.db.refreshFamily.findUniqueOrThrow({ where: { id: foreignId } })).revokedAt, null);
    });

    test("bulk delete keeps the caller's session; without toa_sid it revokes all", async () => {
      const { userId } = await app.register("fay", "fay@example.com");
      await loginAs("fay", "one");
      const keep = await loginAs("fay", "two");
      const before = app.audits.length;
      assert.equal((await app.request("DELETE", "/auth/sessions", { token: keep.access_token })).status, 204);
      assert.equal(app.audits.length - before, 2, "one event per revoked family");
      const left = (await app.request("GET", "/auth/sessions", { token: keep.access_token })).body as Summary[];
      assert.deepEqual(left.map((s) => s.isCurrent), [true]);
      assert.equal((await app.request("POST", "/auth/refresh", { body: { refreshToken: keep.refresh_token } })).status, 200);

      const external = await localToken({ sub: userId }, { at: app.clock.now() });
      const none = (await app.request("GET", "/auth/sessions", { token: external })).body as Summary[];
      assert.ok(none.every((s) => !s.isCurrent));
      assert.equal((await app.request("DELETE", "/auth/sessions", { token: external })).status, 204);
      assert.deepEqual((await app.request("GET", "/auth/sessions", { token: external })).body, []);
    });
  });
}
