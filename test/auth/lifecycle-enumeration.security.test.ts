// Attack: account enumeration through the anonymous mail endpoints. An attacker posts addresses to
// /password/forgot and /magic-link and watches the status, the body and the response time: a
// different answer (or a slower one, because a lookup, a token write or a slow mail server ran
// first) for an address with an account reveals who has one. Every input must get the same
// empty 204, and the response must not wait for the lookup or the hook. Rather than timing
// (which no test can bound reliably), the proof is causal: the hook is held open and the 204
// arrives anyway, and a hook that throws changes nothing on the wire. The concurrency case sends
// a burst for one address: all 204, one mail (MailRequestCooldown).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { providers } from "../harness/databases.ts";
import { eventually, startLifecycleApp, type HookName, type LifecycleApp } from "./lifecycle-helpers.ts";

const ENDPOINTS: { path: string; hook: HookName }[] = [
  { path: "/auth/password/forgot", hook: "passwordReset" },
  { path: "/auth/magic-link", hook: "magicLink" },
];

for (const provider of providers()) {
  describe(`no enumeration through forgot and magic-link (${provider})`, () => {
    let app: LifecycleApp;
    before(async () => {
      app = await startLifecycleApp(provider, { config: { LocalLogin: { MailRequestCooldown: "00:01:00" } } });
      await app.register("known", "known@example.com");
      await app.register("failing", "failing@example.com");
      // An account that arrived through an identity provider: a profile email, no local credential.
      await app.db.user.create({ data: { id: "external-1", securityStamp: "s", email: "external@example.com", externalIssuer: "https://idp.example", externalSubject: "ext-1" } });
    });
    after(async () => {
      app.assertNoLeaks();
      await app.close();
    });

    for (const { path, hook } of ENDPOINTS) {
      test(`${path}: unknown, external-only, eligible and hook-failing addresses get the same 204, before the hook returns`, async () => {
        let release = (): void => {};
        app.hold[hook] = new Promise<void>((resolve) => (release = resolve));
        try {
          const count = app.of(hook).length;
          const answers = [];
          for (const email of ["unknown@example.com", "external@example.com", "known@example.com"]) {
            answers.push(await app.request("POST", path, { body: { email } }));
          }
          // The eligible address's hook is now running and held: its 204 was sent without it.
          await eventually(() => app.of(hook).length === count + 1, "the held hook call");
          app.failing.add(hook);
          answers.push(await app.request("POST", path, { body: { email: "failing@example.com" } }));
          for (const r of answers) {
            assert.equal(r.status, 204);
            assert.equal(r.text, "");
            assert.equal(r.headers.get("content-length"), null);
            assert.equal(r.headers.get("content-type"), null);
          }
          assert.equal(app.of(hook).at(-1)?.to, "known@example.com", "the hook was still held when every answer arrived");
        } finally {
          release();
          delete app.hold[hook];
        }
        await eventually(() => app.of(hook).some((m) => m.to === "failing@example.com"), "the failing hook call");
        app.failing.delete(hook);
        assert.ok(!app.of(hook).some((m) => m.to === "external@example.com" || m.to === "unknown@example.com"));
      });
    }

    test("a burst for one address: every answer 204, one mail per cooldown", async () => {
      await app.register("bursty", "bursty@example.com");
      const results = await Promise.all(Array.from({ length: 10 }, () => app.request("POST", "/auth/magic-link", { body: { email: "bursty@example.com" } })));
      assert.deepEqual(new Set(results.map((r) => r.status)), new Set([204]));
      await eventually(() => app.of("magicLink").some((m) => m.to === "bursty@example.com"), "the one mail");
      await app.settle();
      assert.equal(app.of("magicLink").filter((m) => m.to === "bursty@example.com").length, 1);
    });
  });
}
