/**
 * Attack: make an endpoint answer outside its contract. The Endpoints table lists 204, 400, 403
 * and 502 for `POST /auth/users/{userId}/password` and 204, 400, 409 and 429 for
 * `POST /auth/email`; the service also answered 404 for an unknown user id (an answer a client
 * built on the table does not expect, and an oracle telling which ids exist) and 502 when the
 * verification mail could not be sent. Both now answer only listed codes: an unknown user is 400,
 * a failed verification mail is 400 `{errors}` (nothing moved, the cooldown is given back). The
 * concurrency cases race many such requests and check every answer.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { providers } from "../harness/databases.ts";
import { PASSWORD, startLifecycleApp, type LifecycleApp } from "./lifecycle-helpers.ts";

for (const provider of providers()) {
  describe(`only the listed answers (${provider})`, () => {
    let app: LifecycleApp;
    let admin: string;
    before(async () => {
      app = await startLifecycleApp(provider);
      admin = await app.adminToken();
    });
    after(async () => {
      app.assertNoLeaks();
      await app.close();
    });

    test("admin set password: unknown ids, raced with a real one, answer 400, never 404", async () => {
      const { userId } = await app.register("listed", "listed@example.com");
      const unknown = Array.from({ length: 8 }, () => randomUUID());
      const answers = await Promise.all([
        ...unknown.map((id) => app.request("POST", `/auth/users/${id}/password`, { token: admin, body: {} })),
        ...["not-a-uuid", "%20"].map((id) => app.request("POST", `/auth/users/${id}/password`, { token: admin, body: {} })),
        app.request("POST", `/auth/users/${userId}/password`, { token: admin, body: {} }),
      ]);
      const real = answers.pop();
      for (const r of answers) {
        assert.equal(r.status, 400, r.text);
        assert.ok(Array.isArray((r.body as { errors?: unknown }).errors));
      }
      assert.equal(real?.status, 204, real?.text);
      for (const r of [...answers, real]) assert.ok([204, 400, 403, 502].includes(r?.status ?? 0));
    });

    test("/auth/email with a failing verification hook: 400 {errors}, racing requests too; nothing moves", async () => {
      const { userId, pair } = await app.register("mailfail", "mailfail@example.com");
      app.failing.add("emailVerification");
      try {
        const answers = await Promise.all(
          Array.from({ length: 5 }, (_, i) => app.request("POST", "/auth/email", { token: pair.access_token, body: { newEmail: `new${i}@example.com`, currentPassword: PASSWORD } })),
        );
        for (const r of answers) {
          assert.ok([400, 429].includes(r.status), `${r.status} ${r.text}`);
          assert.ok(Array.isArray((r.body as { errors?: unknown }).errors));
        }
        assert.ok(answers.some((r) => r.status === 400), "the failed delivery itself is a 400");
        assert.equal(await app.db.singleUseToken.count({ where: { userId, kind: "email-verification", retiredAt: null, consumedAt: null } }), 0, "no live link");
      } finally {
        app.failing.delete("emailVerification");
      }
      const retry = await app.request("POST", "/auth/email", { token: pair.access_token, body: { newEmail: "new@example.com", currentPassword: PASSWORD } });
      assert.equal(retry.status, 204, "the cooldown was given back: the person can retry at once");
    });
  });
}
