/**
 * Attack: erase other people's security writes by rolling back a transaction. On the embedded
 * database one connection serves every request; a plain write issued while another request's
 * transaction was open joined that transaction and vanished with its rollback, after its own
 * request had already answered success. Anyone with a passkey could open such a transaction at
 * will (`POST /auth/2fa/passkey/verify` with a bad signature verified it inside the transaction
 * and rolled back) and so erase a victim's lockout counter (unbounded password guessing), logouts,
 * session revocations and refresh-reuse revocations.
 *
 * Each race below runs a rolled-back transaction against the writes and then finds every write
 * kept, on SQLite and PostgreSQL: first a transaction held open across non-database work on the
 * server's own client (the mechanism), then the passkey route itself with forged signatures.
 */
import assert from "node:assert/strict";
import { webcrypto } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { providers } from "../harness/databases.ts";
import { PASSWORD, startAuthApp, type AuthTestApp, type TokenPair } from "./helpers.ts";
import { softPasskey, type SoftPasskey } from "./soft-authenticator.ts";

const ORIGIN = "http://localhost:8000";
/** High enough that every guess below is counted (the count is what the test reads back). */
const MAX_FAILED = 1000;
/** Upper bound of the window a held transaction stays open when nothing can finish inside it. */
const HOLD_BOUND_MS = 1500;

for (const provider of providers()) {
  describe(`no write is lost to a neighbour's rollback (${provider})`, () => {
    let app: AuthTestApp;
    before(async () => {
      app = await startAuthApp(provider, { LocalLogin: { MaxFailedAttempts: MAX_FAILED }, Passkeys: { RpId: "localhost", Origins: [ORIGIN] } });
    });
    after(async () => {
      assert.deepEqual(app.logs.leaks(app.secrets), []);
      await app.close();
    });

    const signIn = async (userName: string): Promise<TokenPair> => {
      const r = await app.login(userName, PASSWORD);
      assert.equal(r.status, 200, r.text);
      return r.body as TokenPair;
    };
    const familyOf = async (pair: TokenPair) => {
      const sid = JSON.parse(Buffer.from(pair.access_token.split(".")[1] ?? "", "base64url").toString()).toa_sid as string;
      return app.db.refreshFamily.findUniqueOrThrow({ where: { id: sid } });
    };

    test("a transaction held across non-database work and rolled back keeps every concurrent security write", async () => {
      const { userId } = await app.register("held-victim", "held-victim@example.com");
      const { userId: bystander } = await app.register("held-bystander", "held-bystander@example.com");
      const loggedOut = await signIn("held-victim");
      const revokedById = await signIn("held-victim");
      const caller = await signIn("held-victim");
      const reused = await signIn("held-victim");
      const rotated = await app.request("POST", "/auth/refresh", { body: { refreshToken: reused.refresh_token } });
      assert.equal(rotated.status, 200, rotated.text);
      const revokedFamily = await familyOf(revokedById);

      let opened!: () => void;
      const open = new Promise<void>((resolve) => (opened = resolve));
      let writesDone!: () => void;
      const done = new Promise<void>((resolve) => (writesDone = resolve));
      const held = app.db.$transaction(
        async (tx) => {
          await tx.user.update({ where: { id: bystander }, data: { name: "written by the rolled-back transaction" } });
          opened();
          // Non-database work while the transaction is open, until the writes have answered or
          // the bound passes (with isolation they cannot answer before the transaction ends).
          await webcrypto.subtle.digest("SHA-256", new Uint8Array(1024));
          await Promise.race([done, new Promise((resolve) => setTimeout(resolve, HOLD_BOUND_MS))]);
          throw new Error("roll back");
        },
        { timeout: 10_000 },
      );
      await open;
      const writes = Promise.all([
        ...Array.from({ length: 8 }, (_, i) => app.login("held-victim", `wrong guess ${i}`)),
        app.request("POST", "/auth/logout", { body: { refreshToken: loggedOut.refresh_token } }),
        app.request("DELETE", `/auth/sessions/${revokedFamily.id}`, { token: caller.access_token }),
        app.request("POST", "/auth/refresh", { body: { refreshToken: reused.refresh_token } }),
      ]).finally(writesDone);
      const [rollback, answers] = await Promise.allSettled([held, writes]);
      assert.equal(rollback.status, "rejected");
      assert.equal(answers.status, "fulfilled");
      const statuses = answers.value.map((r) => r.status);
      assert.deepEqual(statuses, [...Array<number>(8).fill(401), 204, 204, 401]);

      const credential = await app.db.passwordCredential.findUniqueOrThrow({ where: { userId } });
      assert.equal(credential.failedCount, 8, "every wrong guess is counted");
      assert.notEqual((await familyOf(loggedOut)).revokedAt, null, "the logout stays");
      assert.notEqual((await familyOf(revokedById)).revokedAt, null, "the session revocation stays");
      assert.notEqual((await familyOf(reused)).revokedAt, null, "the reuse revocation stays");
      assert.equal((await app.db.user.findUniqueOrThrow({ where: { id: bystander } })).name, null, "the rolled-back write itself is gone");
    });

    async function registerSoftPasskey(pair: TokenPair): Promise<SoftPasskey> {
      const key = softPasskey(ORIGIN, "localhost");
      const options = await app.request("POST", "/auth/passkeys/registration/options", { token: pair.access_token, body: { currentPassword: PASSWORD } });
      assert.equal(options.status, 200, options.text);
      const verified = await app.request("POST", "/auth/passkeys/registration/verify", {
        token: pair.access_token,
        body: { response: key.register(options.body as { challenge: string }), currentPassword: PASSWORD },
      });
      assert.equal(verified.status, 201, verified.text);
      return key;
    }

    /** One forged passkey answer to a fresh challenge of the attacker's own account. */
    async function forgedVerify(key: SoftPasskey): Promise<number> {
      const login = await app.login("attacker", PASSWORD);
      const challenge = (login.body as { challenge: string }).challenge;
      app.secrets.add(challenge);
      const options = await app.request("POST", "/auth/2fa/passkey/options", { body: { challenge } });
      assert.equal(options.status, 200, options.text);
      const r = await app.request("POST", "/auth/2fa/passkey/verify", { body: { challenge, response: key.assert(options.body as { challenge: string }, { forge: true }) } });
      return r.status;
    }

    test("forged passkey answers racing a victim's wrong guesses, logouts and revocations erase none of them", async () => {
      const attacker = await app.register("attacker", "attacker@example.com");
      const key = await registerSoftPasskey(attacker.pair);
      const { userId } = await app.register("passkey-victim", "passkey-victim@example.com");
      const sessions = await Promise.all(Array.from({ length: 4 }, () => signIn("passkey-victim")));
      const caller = await signIn("passkey-victim");

      const [forged, guesses, logouts, revocations] = await Promise.all([
        Promise.all(Array.from({ length: 6 }, () => forgedVerify(key))),
        Promise.all(Array.from({ length: 20 }, (_, i) => app.login("passkey-victim", `guess ${i}`))),
        Promise.all(sessions.slice(0, 2).map((s) => app.request("POST", "/auth/logout", { body: { refreshToken: s.refresh_token } }))),
        Promise.all(sessions.slice(2).map(async (s) => app.request("DELETE", `/auth/sessions/${(await familyOf(s)).id}`, { token: caller.access_token }))),
      ]);
      assert.deepEqual(new Set(forged), new Set([401]));
      assert.deepEqual(new Set(guesses.map((r) => r.status)), new Set([401]));
      assert.deepEqual([...logouts, ...revocations].map((r) => r.status), [204, 204, 204, 204]);

      const credential = await app.db.passwordCredential.findUniqueOrThrow({ where: { userId } });
      assert.equal(credential.failedCount, 20, "all 20 guesses are counted");
      for (const s of sessions) assert.notEqual((await familyOf(s)).revokedAt, null);
      // A correct assertion still signs the attacker in: the route works, it only stopped leaking.
      const login = await app.login("attacker", PASSWORD);
      const challenge = (login.body as { challenge: string }).challenge;
      app.secrets.add(challenge);
      const options = await app.request("POST", "/auth/2fa/passkey/options", { body: { challenge } });
      const ok = await app.request("POST", "/auth/2fa/passkey/verify", { body: { challenge, response: key.assert(options.body as { challenge: string }) } });
      assert.equal(ok.status, 200, ok.text);
    });
  });
}
