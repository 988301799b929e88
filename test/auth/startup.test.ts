/** Startup checks of local login that depend on registered hooks (login-service.md). */
import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError } from "../../control/config/index.ts";
import { startTestApp } from "../harness/app.ts";

test("no password-reset hook: startup fails naming Mail:Transport", async () => {
  await assert.rejects(startTestApp({ host: { hooks: {} } }), (e: unknown) => e instanceof ConfigError && e.key === "Mail:Transport");
});

test("RequireVerifiedEmailForPasswordReset without an email-verification hook fails startup", async () => {
  await assert.rejects(
    startTestApp({ config: { LocalLogin: { RequireVerifiedEmailForPasswordReset: true } }, host: { hooks: { passwordReset: async () => {} } } }),
    (e: unknown) => e instanceof ConfigError && e.key === "LocalLogin:RequireVerifiedEmailForPasswordReset",
  );
});

test("a bad signing key names its entry", async () => {
  await assert.rejects(
    startTestApp({ config: { LocalLogin: { SigningKeys: ["not a key"] } }, host: { hooks: { passwordReset: async () => {} } } }),
    (e: unknown) => e instanceof ConfigError && e.key === "LocalLogin:SigningKeys:0",
  );
});
