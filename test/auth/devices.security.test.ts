// Attack: a trusted-device token copied off the device (malware, a synced backup, a log) and
// replayed to skip the second factor. The token rotates on every use, so whichever of the thief
// and the owner comes second presents a spent token: that revokes the device for both (theft
// signal, logged with the device id, never the token). Concurrent uses of one token are such a
// replay too: exactly one signs in. A token stops working when the user's security stamp moved
// (even if revocation was forgotten), and another account's token skips nothing.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { providers } from "../harness/databases.ts";
import { startAuthApp, type AuthTestApp, type TokenPair } from "./helpers.ts";
import { loginWith, registerEnrolled, signInWithCode } from "./twofactor-helpers.ts";

const isChallenge = (body: unknown): boolean => (body as { two_factor_required?: boolean }).two_factor_required === true;

for (const provider of providers()) {
  describe(`trusted-device attacks (${provider})`, () => {
    let app: AuthTestApp;
    before(async () => {
      app = await startAuthApp(provider);
    });
    after(async () => {
      assert.deepEqual(app.logs.leaks(app.secrets), []);
      await app.close();
    });

    test("a spent token presented again revokes the device: the rotated token stops working too", async () => {
      const user = await registerEnrolled(app, "Vic");
      const first = await signInWithCode(app, user, { rememberDevice: true });
      const stolen = first.device_token ?? "";
      const owner = await loginWith(app, "Vic", { deviceToken: stolen });
      const rotated = (owner.body as TokenPair).device_token ?? "";
      app.secrets.add(rotated);
      assert.ok(rotated);

      const replay = await loginWith(app, "Vic", { deviceToken: stolen });
      assert.ok(isChallenge(replay.body), "the thief gets a challenge");
      const device = await app.db.trustedDevice.findFirstOrThrow({ where: { userId: user.userId } });
      assert.ok(device.revokedAt, "device revoked");
      assert.ok(isChallenge((await loginWith(app, "Vic", { deviceToken: rotated })).body), "the owner's rotated token is dead too");
      const warning = app.logs.lines.find((l) => l.includes("spent trusted-device token"));
      assert.ok(warning, "theft signal logged");
      assert.ok(warning.includes(device.id), "with the device's family id");
      assert.ok(JSON.parse(warning).level >= 40, "at warn level");
    });

    test("concurrent uses of one token: exactly one signs in", async () => {
      const user = await registerEnrolled(app, "Wes");
      const token = (await signInWithCode(app, user, { rememberDevice: true })).device_token ?? "";
      const results = await Promise.all(Array.from({ length: 5 }, () => loginWith(app, "Wes", { deviceToken: token })));
      for (const r of results) assert.equal(r.status, 200, r.text);
      const signedIn = results.filter((r) => !isChallenge(r.body));
      for (const r of signedIn) app.secrets.add((r.body as TokenPair).device_token ?? "");
      assert.equal(signedIn.length, 1);
      assert.equal(results.filter((r) => isChallenge(r.body)).length, 4);
    });

    test("a moved security stamp refuses the device even without revocation", async () => {
      const user = await registerEnrolled(app, "Xan");
      const token = (await signInWithCode(app, user, { rememberDevice: true })).device_token ?? "";
      await app.db.user.update({ where: { id: user.userId }, data: { securityStamp: "moved-elsewhere" } });
      assert.ok(isChallenge((await loginWith(app, "Xan", { deviceToken: token })).body));
    });

    test("another account's device token skips nothing and leaves that device alone", async () => {
      const yan = await registerEnrolled(app, "Yan");
      await registerEnrolled(app, "Zed");
      const token = (await signInWithCode(app, yan, { rememberDevice: true })).device_token ?? "";
      assert.ok(isChallenge((await loginWith(app, "Zed", { deviceToken: token })).body));
      const own = await loginWith(app, "Yan", { deviceToken: token });
      assert.ok(!isChallenge(own.body), "still Yan's");
      app.secrets.add((own.body as TokenPair).device_token ?? "");
    });

    test("an unknown or absurd token gets a challenge", async () => {
      await registerEnrolled(app, "Abe");
      assert.ok(isChallenge((await loginWith(app, "Abe", { deviceToken: "not-a-token" })).body));
      assert.ok(isChallenge((await loginWith(app, "Abe", { deviceToken: "x".repeat(5000) })).body));
    });
  });
}
