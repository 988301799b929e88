/**
 * The account lifecycle end to end through `Mail:Transport=file` (decisions.md Delivery hooks):
 * no host hooks at all; every secret travels only in a 0600 JSON file, which the test reads the
 * way a developer would, then redeems over HTTP. Also the secret scan over those flows.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, test } from "node:test";
import type { MailFile } from "../../control/auth/hooks/index.ts";
import { startTestApp } from "../harness/app.ts";
import { providers } from "../harness/databases.ts";
import { cheapHasher, PASSWORD, type TokenPair } from "./helpers.ts";

for (const provider of providers()) {
  describe(`lifecycle through the file transport (${provider})`, () => {
    test("email verification, magic link, invitation and admin password all arrive as files and work", async (t) => {
      const dir = mkdtempSync(join(tmpdir(), "toa-mail-"));
      const admins = new Set<string>();
      const app = await startTestApp({
        provider,
        config: {
          LocalLogin: { AllowSelfRegistration: true, RateLimit: { Enabled: false }, MailRequestCooldown: 0, TokenCleanupInterval: 0 },
          Mail: { Transport: "file", File: { Directory: dir } },
          Oidc: { AdminRole: "toa-admin" },
        },
        host: { hooks: {}, passwordHasher: cheapHasher(), roleProvider: (id) => (admins.has(id) ? ["toa-admin"] : []) },
      });
      t.after(async () => {
        await app.close();
        rmSync(dir, { recursive: true, force: true });
      });
      const secrets = new Set<string>([PASSWORD]);
      const responses: string[] = [];
      const call = async (method: string, path: string, options: { body?: unknown; token?: string } = {}) => {
        const r = await app.request(method, path, options);
        responses.push(r.text);
        return r;
      };
      const seen = new Set<string>();
      const nextFile = async (kind: MailFile["kind"]): Promise<MailFile> => {
        for (let i = 0; i < 300; i += 1) {
          for (const name of readdirSync(dir).sort()) {
            if (seen.has(name) || name.startsWith(".")) continue;
            const mail = JSON.parse(readFileSync(join(dir, name), "utf8")) as MailFile;
            if (mail.kind !== kind) continue;
            seen.add(name);
            assert.equal(statSync(join(dir, name)).mode & 0o777, 0o600);
            for (const s of [mail.token, mail.password]) if (s) secrets.add(s);
            return mail;
          }
          await sleep(10);
        }
        throw new Error(`no ${kind} file`);
      };

      const reg = await call("POST", "/auth/register", { body: { userName: "filer", email: "filer@example.com", password: PASSWORD } });
      assert.equal(reg.status, 201, reg.text);
      const pair = reg.body as TokenPair;

      assert.equal((await call("POST", "/auth/email", { token: pair.access_token, body: { newEmail: "filer@example.com", currentPassword: PASSWORD } })).status, 204);
      const verification = await nextFile("email-verification");
      assert.equal(verification.to, "filer@example.com");
      assert.ok(verification.link?.includes(encodeURIComponent(verification.token ?? "")));
      assert.equal((await call("POST", "/auth/email/verify", { body: { token: verification.token } })).status, 204);

      assert.equal((await call("POST", "/auth/magic-link", { body: { email: "filer@example.com" } })).status, 204);
      const magic = await nextFile("magic-link");
      const signedIn = await call("POST", "/auth/magic-link/verify", { body: { token: magic.token } });
      assert.equal(signedIn.status, 200, signedIn.text);

      const cred = await app.server.database.db.passwordCredential.findUniqueOrThrow({ where: { normalizedUserName: "filer" } });
      admins.add(cred.userId);
      assert.equal((await call("POST", "/auth/invitations", { token: pair.access_token, body: { email: "guest@example.com" } })).status, 201);
      const invitation = await nextFile("invitation");
      assert.equal(invitation.userName, null);
      secrets.add("guest chosen passphrase");
      const done = await call("POST", "/auth/invitations/complete", { body: { token: invitation.token, userName: "guest", password: "guest chosen passphrase" } });
      assert.equal(done.status, 201, done.text);

      assert.equal((await call("POST", "/auth/users", { token: pair.access_token, body: { userName: "made", email: "made@example.com" } })).status, 201);
      const issued = await nextFile("admin-password-issued");
      assert.ok(issued.password);
      assert.equal((await call("POST", "/auth/login", { body: { identifier: "made", password: issued.password } })).status, 200);

      const hookSecrets = [verification.token, magic.token, invitation.token, issued.password].filter((s): s is string => !!s);
      assert.equal(hookSecrets.length, 4);
      for (const text of responses) for (const s of hookSecrets) assert.ok(!text.includes(s), "a mailed secret reached a response");
      assert.deepEqual(app.logs.leaks(secrets), []);
    });
  });
}
