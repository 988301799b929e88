/**
 * With every optional feature mapped, /openapi.json documents every route of both specs (and
 * decisions.md's two-factor routes): a route the product serves cannot be missing from /docs.
 */
import { describe, it, after, before } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exportPKCS8, generateKeyPair } from "jose";
import { startTestApp, type TestApp } from "../harness/app.ts";
import { BOT_SPEC_ROUTES } from "../harness/spec-routes.ts";

const SPEC_ROUTES: ReadonlyArray<readonly [string, string]> = [
  ...BOT_SPEC_ROUTES,
  ["post", "/auth/login"],
  ["post", "/auth/refresh"],
  ["post", "/auth/logout"],
  ["get", "/auth/sessions"],
  ["delete", "/auth/sessions/{id}"],
  ["delete", "/auth/sessions"],
  ["post", "/auth/register"],
  ["post", "/auth/password"],
  ["post", "/auth/password/forgot"],
  ["post", "/auth/password/reset"],
  ["post", "/auth/email"],
  ["post", "/auth/email/verify"],
  ["post", "/auth/magic-link"],
  ["post", "/auth/magic-link/verify"],
  ["post", "/auth/users"],
  ["post", "/auth/users/{userId}/password"],
  ["post", "/auth/invitations"],
  ["post", "/auth/invitations/complete"],
  ["post", "/auth/invitations/revoke"],
  ["get", "/auth/.well-known/jwks.json"],
  ["get", "/auth/devices"],
  ["delete", "/auth/devices/{id}"],
  ["delete", "/auth/devices"],
  ["post", "/auth/2fa/verify"],
  ["post", "/auth/2fa/totp/enroll"],
  ["post", "/auth/2fa/totp/confirm"],
  ["post", "/auth/2fa/step-up"],
  ["post", "/auth/2fa/recovery-codes"],
  ["delete", "/auth/2fa"],
];

/** Path parameters are compared by position, whatever each route module named them. */
const shape = (path: string): string => path.replace(/\{[^}]+\}/g, "{}");

describe("every route is documented", () => {
  let t: TestApp;
  before(async () => {
    const { privateKey } = await generateKeyPair("ES256", { extractable: true });
    t = await startTestApp({
      config: {
        LocalLogin: { SigningKey: undefined as never, SigningKeys: [await exportPKCS8(privateKey)], AllowSelfRegistration: true },
        Mail: { Transport: "file", File: { Directory: mkdtempSync(join(tmpdir(), "toa-mail-")) } },
        Oidc: { AdminRole: "admin", ClientId: "toa-tests" },
        bot: { RECORDINGS_DIR: mkdtempSync(join(tmpdir(), "toa-rec-")) },
      },
    });
  });
  after(() => t.close());

  it("lists each route of the specs in /openapi.json", async () => {
    const doc = (await t.request("GET", "/openapi.json")).body as { paths: Record<string, Record<string, unknown>> };
    const documented = new Set(Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m} ${shape(path)}`)));
    const missing = SPEC_ROUTES.filter(([m, p]) => !documented.has(`${m} ${shape(p)}`)).map(([m, p]) => `${m.toUpperCase()} ${p}`);
    assert.deepEqual(missing, []);
  });
});
