/**
 * A webhook configuration that can never deliver is refused at the start (exit 78, one line
 * naming the key) rather than accepted and then failing every event for 24 hours: a WEBHOOK_URL
 * that is not an absolute http(s) URL, and a `whsec_` WEBHOOK_SECRET the Standard Webhooks
 * reference library cannot read (a receiver's `new Webhook(secret)` throws on it too).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { runMain } from "../harness/main-process.ts";
import { loadConfig } from "../../control/config/index.ts";

describe("webhook settings that can never deliver stop the start", () => {
  for (const [name, env, key] of [
    ["a whsec_ secret whose key is not base64", { WEBHOOK_URL: "http://127.0.0.1:9/hook", WEBHOOK_SECRET: "whsec_abc" }, "WEBHOOK_SECRET"],
    ["a WEBHOOK_URL that is not a URL", { WEBHOOK_URL: "hooks.example.com/recorder" }, "WEBHOOK_URL"],
  ] as const) {
    it(`${name}: exit 78, one line naming ${key}`, async () => {
      const { code, stderr } = await runMain({ LocalLogin__Enabled: "false", ...env });
      assert.equal(code, 78, stderr);
      const lines = stderr.trim().split("\n");
      assert.equal(lines.length, 1, stderr);
      assert.ok(lines[0]?.includes(key), lines[0]);
    });
  }

  it("other URL schemes and an empty whsec_ key are refused; valid forms load", () => {
    assert.throws(() => loadConfig({ WEBHOOK_URL: "ftp://example.com/hook", LocalLogin__Enabled: "false" }), /WEBHOOK_URL/);
    assert.throws(() => loadConfig({ WEBHOOK_URL: "https://example.com/hook", WEBHOOK_SECRET: "whsec_", LocalLogin__Enabled: "false" }), /WEBHOOK_SECRET/);
    for (const secret of ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "my-shared-secret", " whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n"]) {
      const config = loadConfig({ WEBHOOK_URL: "https://example.com/hook", WEBHOOK_SECRET: secret, LocalLogin__Enabled: "false" });
      assert.equal(config.bot.WEBHOOK_SECRET, secret);
    }
  });
});
