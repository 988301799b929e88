/**
 * Attack: read reset links out of the logs. The password-reset hook runs after the 204 with the
 * raw token and link; when it failed, its error was logged whole, and a mail library's error
 * quotes what it was sending (the SMTP reply, the message, the link). Anyone with log access then
 * held a live reset link. A failing hook is now logged with its class and a plain code only. Many
 * failing deliveries racing each other leak nothing either.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { startTestApp, type TestApp } from "../harness/app.ts";
import { providers } from "../harness/databases.ts";
import type { HookMessage } from "../../control/app/host.ts";
import { cheapHasher, PASSWORD } from "./helpers.ts";

class SmtpError extends Error {
  override readonly name = "SmtpError";
  constructor(
    message: string,
    readonly code: string,
    readonly response: string,
  ) {
    super(message);
  }
}

for (const provider of providers()) {
  describe(`a failing reset hook's error is logged without its text (${provider})`, () => {
    let app: TestApp;
    const attempted: HookMessage[] = [];
    before(async () => {
      app = await startTestApp({
        provider,
        config: { LocalLogin: { AllowSelfRegistration: true, RateLimit: { Enabled: false }, TokenCleanupInterval: 0 } },
        host: {
          passwordHasher: cheapHasher(),
          hooks: {
            passwordReset: async (m) => {
              attempted.push(m);
              // What a mail library's error looks like: the reply quotes the message being sent.
              throw new SmtpError(`Message to ${m.to} rejected: ${m.link}`, "EMESSAGE", `554 rejected: ${m.token}`);
            },
          },
        },
      });
    });
    after(() => app.close());

    test("racing forgot requests whose deliveries all fail: no token or link in any log line; class and code are", async () => {
      const people = Array.from({ length: 6 }, (_, i) => `leaky${i}`);
      for (const p of people) assert.equal((await app.request("POST", "/auth/register", { body: { userName: p, email: `${p}@example.com`, password: PASSWORD } })).status, 201);
      const answers = await Promise.all(people.map((p) => app.request("POST", "/auth/password/forgot", { body: { email: `${p}@example.com` } })));
      for (const r of answers) assert.equal(r.status, 204);
      for (let i = 0; i < 300 && app.logs.lines.filter((l) => l.includes("password-reset hook failed")).length < people.length; i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      assert.equal(attempted.length, people.length);
      const secrets = attempted.flatMap((m) => [m.token ?? "", m.link ?? ""]).filter((s) => s !== "");
      assert.deepEqual(app.logs.leaks(secrets), [], "no token or link reaches a log line");
      const failures = app.logs.lines.filter((l) => l.includes("password-reset hook failed")).map((l) => JSON.parse(l) as Record<string, unknown>);
      assert.equal(failures.length, people.length);
      for (const f of failures) {
        assert.equal(f.errorKind, "SmtpError");
        assert.equal(f.errorCode, "EMESSAGE");
        assert.equal(f.err, undefined, "no serialized error (message, stack, properties)");
        assert.ok(!JSON.stringify(f).includes("rejected"), "no part of the message");
      }
    });
  });
}
