/**
 * Password storage and policy: the stored format, pepper rotation with re-hash on the next
 * successful sign-in, the iteration ceiling (DoS guard), length bounds and the common-password
 * list, and one sign-in with the real production parameters (600,000 iterations).
 */
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { createPbkdf2Hasher, MAX_STORED_ITERATIONS } from "../../control/auth/passwords/pbkdf2.ts";
import { isCommonPassword } from "../../control/auth/passwords/common-passwords.ts";
import { providers } from "../harness/databases.ts";
import { cheapHasher, startAuthApp, PASSWORD, type AuthTestApp } from "./helpers.ts";

describe("PBKDF2 hasher", () => {
  const settings = { iterations: 1000, saltBytes: 16, hashBytes: 32, pepper: { version: 2, secret: "pepper-two" }, retired: new Map([[1, "pepper-one"]]) };
  const hasher = createPbkdf2Hasher(settings);

  test("stored format records algorithm, iterations, pepper version, salt and hash", async () => {
    const stored = await hasher.hash("some password");
    assert.match(stored, /^pbkdf2-sha256\$1000\$2\$[A-Za-z0-9+/=]{24}\$[A-Za-z0-9+/=]{44}$/);
    assert.deepEqual(await hasher.verify("some password", stored), { ok: true, needsRehash: false });
    assert.deepEqual(await hasher.verify("other password", stored), { ok: false, needsRehash: false });
  });

  test("a hash under a retired pepper or fewer iterations verifies and asks for a re-hash", async () => {
    const old = createPbkdf2Hasher({ ...settings, pepper: { version: 1, secret: "pepper-one" }, retired: new Map() });
    assert.deepEqual(await hasher.verify("pw", await old.hash("pw")), { ok: true, needsRehash: true });
    const weaker = createPbkdf2Hasher({ ...settings, iterations: 1000 });
    const stronger = createPbkdf2Hasher({ ...settings, iterations: 2000 });
    assert.deepEqual(await stronger.verify("pw", await weaker.hash("pw")), { ok: true, needsRehash: true });
  });

  test("an unknown pepper version, a malformed row or too many iterations never verifies", async () => {
    const unknown = createPbkdf2Hasher({ ...settings, pepper: { version: 9, secret: "nine" } });
    assert.equal((await hasher.verify("pw", await unknown.hash("pw"))).ok, false);
    const stored = await hasher.hash("pw");
    const huge = stored.replace("$1000$", `$${MAX_STORED_ITERATIONS + 1}$`);
    const started = performance.now();
    assert.equal((await hasher.verify("pw", huge)).ok, false);
    assert.ok(performance.now() - started < 5000, "refused without running 50M+ iterations");
    assert.equal((await hasher.verify("pw", "plain text")).ok, false);
  });

  test("common passwords are recognised case-insensitively", () => {
    assert.equal(isCommonPassword("password"), true);
    assert.equal(isCommonPassword("PassWord"), true);
    assert.equal(isCommonPassword("qwerty123"), true);
    assert.equal(isCommonPassword(PASSWORD), false);
  });
});

for (const provider of providers()) {
  describe(`pepper rotation and policy (${provider})`, () => {
    const apps: AuthTestApp[] = [];
    after(async () => {
      for (const app of apps) {
        assert.deepEqual(app.logs.leaks(app.secrets), []);
        await app.close();
      }
    });

    test("after a pepper rotation the old hash signs in and is re-hashed under the new pepper", async () => {
      const before = await startAuthApp(provider, {}, cheapHasher({ version: 1, secret: "old pepper" }));
      apps.push(before);
      const { userId } = await before.register("pep", "pep@example.com");
      const oldHash = (await before.db.passwordCredential.findUniqueOrThrow({ where: { userId } })).passwordHash;
      assert.match(oldHash, /\$1000\$1\$/);
      // A rotated deployment on the same database: new pepper v2, v1 retired.
      const rotated = createPbkdf2Hasher({ iterations: 1000, saltBytes: 16, hashBytes: 32, pepper: { version: 2, secret: "new pepper" }, retired: new Map([[1, "old pepper"]]) });
      assert.deepEqual(await rotated.verify(PASSWORD, oldHash), { ok: true, needsRehash: true });
      const app = await startAuthApp(provider, {}, rotated);
      apps.push(app);
      const { userId: id2 } = await app.register("pep2", "pep2@example.com");
      await app.db.passwordCredential.update({ where: { userId: id2 }, data: { passwordHash: oldHash } });
      assert.equal((await app.login("pep2", PASSWORD)).status, 200);
      const newHash = (await app.db.passwordCredential.findUniqueOrThrow({ where: { userId: id2 } })).passwordHash;
      assert.match(newHash, /\$1000\$2\$/);
      assert.equal((await app.login("pep2", PASSWORD)).status, 200, "the re-hashed password still signs in");
    });

    test("policy: length bounds and (opted in) common passwords answer 400 with errors for a person", async () => {
      const app = await startAuthApp(provider, { LocalLogin: { RejectCommonPasswords: true } });
      apps.push(app);
      const reg = (password: string) => app.request("POST", "/auth/register", { body: { userName: `p${password.length}`, email: "p@example.com", password } });
      const short = await reg("short");
      assert.equal(short.status, 400);
      assert.deepEqual(short.body, { errors: ["The password must be at least 8 characters long."] });
      const long = await reg("x".repeat(129) + "y");
      assert.deepEqual(long.body, { errors: ["The password must be at most 128 characters long."] });
      const common = await reg("Password1");
      assert.equal(common.status, 400);
      assert.match((common.body as { errors: string[] }).errors[0] ?? "", /commonly used/);
      assert.equal((await reg("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")).status, 201, "no composition rules");
    });

    test("by default length is the only rule (Account rule 5): 8 and 128 characters are accepted, common or not", async () => {
      const app = await startAuthApp(provider);
      apps.push(app);
      const reg = (userName: string, password: string) => app.request("POST", "/auth/register", { body: { userName, email: `${userName}@example.com`, password } });
      assert.equal((await reg("eight", "abcdefgh")).status, 201, "exactly MinimumPasswordLength");
      assert.equal((await reg("common", "password123")).status, 201);
      assert.equal((await reg("max", "b".repeat(128))).status, 201, "exactly MaximumPasswordLength");
      assert.equal((await reg("seven", "abcdefg")).status, 400);
    });

    test("real parameters: 600,000 iterations with a pepper, sign-in works end to end", async () => {
      const app = await startAuthApp(provider, { LocalLogin: { Pepper: "real-pepper-secret", PepperVersion: 3 } }, null);
      apps.push(app);
      const { userId } = await app.register("real", "real@example.com");
      const stored = (await app.db.passwordCredential.findUniqueOrThrow({ where: { userId } })).passwordHash;
      assert.match(stored, /^pbkdf2-sha256\$600000\$3\$/);
      assert.equal((await app.login("real", PASSWORD)).status, 200);
      assert.equal((await app.login("real", "not the password")).status, 401);
    });
  });
}
