/**
 * Invitations (login-service.md Account rules 13, 14; states "invitation"): a reserved row with no
 * user name or credential, the token only to the hook, re-invite reusing the reservation and
 * retiring earlier links, rollback of a new reservation when the hook throws and retirement of
 * the links of an existing one, completion (201 token pair, verified address, 409 leaving the
 * token usable, 400 for `@`), revocation (204 / 404) and the mapping conditions.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { providers } from "../harness/databases.ts";
import { claimsOf, startLifecycleApp, type LifecycleApp, type TokenPair } from "./lifecycle-helpers.ts";

const NEW_PASSWORD = "invited person passphrase";

for (const provider of providers()) {
  describe(`invitations (${provider})`, () => {
    let app: LifecycleApp;
    let admin: string;
    before(async () => {
      app = await startLifecycleApp(provider);
      app.secrets.add(NEW_PASSWORD);
      admin = await app.adminToken();
    });
    after(async () => {
      app.assertNoLeaks();
      await app.close();
    });
    const invite = (email: string) => app.request("POST", "/auth/invitations", { token: admin, body: { email } });
    const complete = (token: string | undefined, userName: string, password = NEW_PASSWORD) =>
      app.request("POST", "/auth/invitations/complete", { body: { token, userName, password } });

    test("creates a reservation, mails the token, completes into a signed-in account with a verified address", async () => {
      const r = await invite("Invitee@Example.com");
      assert.equal(r.status, 201, r.text);
      const body = r.body as { userId: string; email: string };
      assert.deepEqual(Object.keys(body).sort(), ["email", "userId"]);
      assert.equal(body.email, "Invitee@Example.com");
      const user = await app.db.user.findUniqueOrThrow({ where: { id: body.userId }, include: { credential: true } });
      assert.equal(user.reserved, true);
      assert.equal(user.name, null);
      assert.equal(user.credential, null);
      const message = app.of("invitation").at(-1);
      assert.ok(message?.token);
      assert.equal(message.to, "Invitee@Example.com");
      assert.equal(message.userName, null);
      assert.equal(message.link, `http://localhost:8000/invitation?token=${encodeURIComponent(message.token)}`);
      assert.ok(!r.text.includes(message.token));

      const done = await complete(message.token, "invitee");
      assert.equal(done.status, 201, done.text);
      const pair = done.body as TokenPair;
      assert.equal(claimsOf(pair).sub, body.userId, "the one reserved account, not a new one");
      assert.equal(claimsOf(pair).email, "Invitee@Example.com", "the address is proven");
      const cred = await app.db.passwordCredential.findUniqueOrThrow({ where: { userId: body.userId } });
      assert.equal(cred.userName, "invitee");
      assert.equal(cred.normalizedEmail, "invitee@example.com");
      assert.ok(cred.emailConfirmedAt);
      assert.equal((await app.db.user.findUniqueOrThrow({ where: { id: body.userId } })).reserved, false);
      assert.equal((await app.login("invitee", NEW_PASSWORD)).status, 200);
      assert.equal((await complete(message.token, "invitee2")).status, 400, "used");
      assert.equal((await app.request("POST", "/auth/invitations/revoke", { token: admin, body: { email: "invitee@example.com" } })).status, 404, "completed: no open invitation");
    });

    test("re-inviting reuses the reservation and retires the earlier links", async () => {
      const first = await invite("again@example.com");
      const firstToken = app.of("invitation").at(-1)?.token;
      const second = await invite("AGAIN@example.com");
      const secondToken = app.of("invitation").at(-1)?.token;
      assert.equal((second.body as { userId: string }).userId, (first.body as { userId: string }).userId);
      assert.equal(await app.db.user.count({ where: { reserved: true, email: { in: ["again@example.com", "AGAIN@example.com"] } } }), 1);
      assert.equal((await complete(firstToken, "again-one")).status, 400);
      assert.equal((await complete(secondToken, "again-one")).status, 201);
    });

    test("hook failure on a new reservation rolls it back (row and token deleted) with 502", async () => {
      app.failing.add("invitation");
      const r = await invite("fails@example.com");
      app.failing.delete("invitation");
      assert.equal(r.status, 502, r.text);
      assert.equal((r.body as { error: string }).error, "notification_failed");
      const lost = app.of("invitation").at(-1);
      assert.equal(await app.db.user.count({ where: { id: lost?.userId } }), 0);
      assert.equal(await app.db.singleUseToken.count({ where: { userId: lost?.userId } }), 0);
      assert.equal((await complete(lost?.token, "ghost")).status, 400);
      assert.equal((await app.request("POST", "/auth/invitations/revoke", { token: admin, body: { email: "fails@example.com" } })).status, 404);
    });

    test("hook failure on an existing reservation keeps it with every link retired", async () => {
      const ok = await invite("keeps@example.com");
      const userId = (ok.body as { userId: string }).userId;
      const oldToken = app.of("invitation").at(-1)?.token;
      app.failing.add("invitation");
      const r = await invite("keeps@example.com");
      app.failing.delete("invitation");
      assert.equal(r.status, 502);
      const failedToken = app.of("invitation").at(-1)?.token;
      assert.equal((await app.db.user.findUniqueOrThrow({ where: { id: userId } })).reserved, true);
      assert.equal(await app.db.singleUseToken.count({ where: { userId, consumedAt: null, retiredAt: null } }), 0);
      assert.equal((await complete(oldToken, "keeps")).status, 400);
      assert.equal((await complete(failedToken, "keeps")).status, 400);
      const retry = await invite("keeps@example.com");
      assert.equal((retry.body as { userId: string }).userId, userId);
      assert.equal((await complete(app.of("invitation").at(-1)?.token, "keeps")).status, 201);
    });

    test("a taken user name is 409 and leaves the token usable; @ in the name and a weak password are 400", async () => {
      await app.register("taken", "taken@example.com");
      await invite("namer@example.com");
      const token = app.of("invitation").at(-1)?.token;
      const taken = await complete(token, "TAKEN");
      assert.equal(taken.status, 409);
      assert.ok(Array.isArray((taken.body as { errors: unknown }).errors));
      assert.equal((await complete(token, "na@mer")).status, 400);
      assert.equal((await complete(token, "namer", "short")).status, 400);
      assert.equal((await complete(token, "namer")).status, 201, "the token survived the refusals");
    });

    test("revoke: 204, the reservation is removed and its links stop working; 404 with none open", async () => {
      const r = await invite("revoked@example.com");
      const userId = (r.body as { userId: string }).userId;
      const token = app.of("invitation").at(-1)?.token;
      const revoked = await app.request("POST", "/auth/invitations/revoke", { token: admin, body: { email: "Revoked@example.com" } });
      assert.equal(revoked.status, 204);
      assert.equal(revoked.text, "");
      assert.equal(await app.db.user.count({ where: { id: userId } }), 0);
      assert.equal((await complete(token, "revoked")).status, 400);
      assert.equal((await app.request("POST", "/auth/invitations/revoke", { token: admin, body: { email: "revoked@example.com" } })).status, 404);
    });

    test("create and revoke are admin only", async () => {
      const { pair } = await app.register("nonadmin", "nonadmin@example.com");
      const r = await app.request("POST", "/auth/invitations", { token: pair.access_token, body: { email: "z@example.com" } });
      assert.equal(r.status, 403);
      assert.equal((r.body as { error: string }).error, "forbidden");
      assert.equal((await app.request("POST", "/auth/invitations/revoke", { token: pair.access_token, body: { email: "z@example.com" } })).status, 403);
      assert.equal((await app.request("POST", "/auth/invitations", { body: { email: "z@example.com" } })).status, 401);
    });
  });

  describe(`invitation routes mapping (${provider})`, () => {
    test("without Oidc:AdminRole only completion is mapped; without the hook none is", async (t) => {
      const noRole = await startLifecycleApp(provider, { config: { Oidc: { AdminRole: "" } } });
      t.after(() => noRole.close());
      assert.equal((await noRole.request("POST", "/auth/invitations", { body: { email: "a@example.com" } })).status, 404);
      assert.equal((await noRole.request("POST", "/auth/invitations/revoke", { body: { email: "a@example.com" } })).status, 404);
      assert.equal((await noRole.request("POST", "/auth/invitations/complete", { body: { token: "x", userName: "abc", password: NEW_PASSWORD } })).status, 400);
      const noHook = await startLifecycleApp(provider, { hooks: ["passwordReset"] });
      t.after(() => noHook.close());
      const admin = await noHook.adminToken();
      assert.equal((await noHook.request("POST", "/auth/invitations", { token: admin, body: { email: "a@example.com" } })).status, 404);
      assert.equal((await noHook.request("POST", "/auth/invitations/complete", { body: { token: "x", userName: "abc", password: NEW_PASSWORD } })).status, 404);
    });
  });
}
