/**
 * Passkeys in real Chromium with a CDP virtual authenticator (SQLite only: the ceremony, not the
 * storage, is under test here). The page is a document of the server's own origin
 * (http://localhost:PORT, a secure context), so the browser signs exactly the origin and RP ID the
 * relying party expects. Covers registration, list, delete, a passkey as the second factor of a
 * sign-in challenge (claims), replay of an assertion, and deletion by a password change.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { chromium, type Browser, type CDPSession, type Page } from "playwright-core";
import { decodePayload, PASSWORD, startAuthApp, type AuthTestApp, type TokenPair } from "./helpers.ts";
import { challengeFor } from "./twofactor-helpers.ts";
import { holdMediaLock } from "../harness/media-lock.ts";
import { freePort } from "../harness/free-port.ts";

// Real Chromium, PulseAudio and ffmpeg: one such file at a time (see media-lock.ts).
await holdMediaLock();

/** Runs the creation ceremony in the page with the server's options; answers the response JSON. */
function createCredential(page: Page, options: unknown): Promise<unknown> {
  return page.evaluate(async (json) => {
    const publicKey = PublicKeyCredential.parseCreationOptionsFromJSON(json as PublicKeyCredentialCreationOptionsJSON);
    const credential = (await navigator.credentials.create({ publicKey })) as PublicKeyCredential;
    return credential.toJSON() as unknown;
  }, options);
}

function getAssertion(page: Page, options: unknown): Promise<unknown> {
  return page.evaluate(async (json) => {
    const publicKey = PublicKeyCredential.parseRequestOptionsFromJSON(json as PublicKeyCredentialRequestOptionsJSON);
    const credential = (await navigator.credentials.get({ publicKey })) as PublicKeyCredential;
    return credential.toJSON() as unknown;
  }, options);
}

describe("passkeys in Chromium (sqlite)", () => {
  let app: AuthTestApp;
  let browser: Browser;
  let page: Page;
  let cdp: CDPSession;
  let origin: string;
  let authenticatorId: string;

  before(async () => {
    const port = await freePort();
    origin = `http://localhost:${port}`;
    app = await startAuthApp("sqlite", { server: { PORT: port }, Passkeys: { RpId: "localhost", Origins: [origin] } });
    browser = await chromium.launch({ executablePath: "/usr/bin/chromium", headless: true, args: ["--no-sandbox", "--disable-dev-shm-usage"] });
    page = await browser.newPage();
    await page.goto(`${origin}/healthz`);
    cdp = await page.context().newCDPSession(page);
    await cdp.send("WebAuthn.enable");
    authenticatorId = await addAuthenticator();
  });

  async function addAuthenticator(): Promise<string> {
    const added = await cdp.send("WebAuthn.addVirtualAuthenticator", {
      options: { protocol: "ctap2", transport: "internal", hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
    });
    return added.authenticatorId;
  }
  after(async () => {
    await browser?.close();
    assert.deepEqual(app.logs.leaks(app.secrets), []);
    await app.close();
  });

  /** `proof` is the step-up proof of issue #14: the current password unless the token has a fresh second factor. */
  async function registerPasskey(token: string, label: string, proof: { currentPassword?: string } = { currentPassword: PASSWORD }): Promise<{ id: string; label: string }> {
    const options = await app.request("POST", "/auth/passkeys/registration/options", { token, body: proof });
    assert.equal(options.status, 200, options.text);
    const response = await createCredential(page, options.body);
    const done = await app.request("POST", "/auth/passkeys/registration/verify", { token, body: { response, label, ...proof } });
    assert.equal(done.status, 201, done.text);
    return done.body as { id: string; label: string };
  }

  async function answerWithPasskey(challenge: string): Promise<{ status: number; body: unknown; assertion: unknown }> {
    const options = await app.request("POST", "/auth/2fa/passkey/options", { body: { challenge } });
    assert.equal(options.status, 200, options.text);
    const assertion = await getAssertion(page, options.body);
    const r = await app.request("POST", "/auth/2fa/passkey/verify", { body: { challenge, response: assertion } });
    return { status: r.status, body: r.body, assertion };
  }

  test("register, list, sign in with the passkey as second factor, replay refused, delete", async () => {
    const { userId, pair } = await app.register("Pia", "pia@example.com");
    const registered = await registerPasskey(pair.access_token, "Laptop");
    assert.equal(registered.label, "Laptop");
    const list = await app.request("GET", "/auth/passkeys", { token: pair.access_token });
    assert.equal(list.status, 200);
    assert.deepEqual((list.body as { id: string }[]).map((p) => p.id), [registered.id]);

    const challenge = await challengeFor(app, "Pia");
    const first = await answerWithPasskey(challenge);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const signedIn = first.body as TokenPair;
    app.secrets.add(signedIn.access_token).add(signedIn.refresh_token);
    const claims = decodePayload(signedIn.access_token);
    assert.deepEqual(claims.amr, ["pwd", "hwk", "mfa"]);
    assert.equal(claims.toa_2fa_source, "passkey");
    // Never given recovery codes (they come with TOTP): nothing is running low.
    assert.equal(signedIn.recovery_codes_running_low, null);
    assert.ok(Math.abs(Number(claims.toa_2fa_at) - Math.floor(app.clock.now().getTime() / 1000)) <= 60, "toa_2fa_at is now");
    const stored = await app.db.passkey.findUniqueOrThrow({ where: { id: registered.id } });
    assert.ok(stored.lastUsedAt, "use recorded");

    // The same assertion on a fresh challenge: its WebAuthn challenge is another one.
    const next = await challengeFor(app, "Pia");
    await app.request("POST", "/auth/2fa/passkey/options", { body: { challenge: next } });
    const replay = await app.request("POST", "/auth/2fa/passkey/verify", { body: { challenge: next, response: first.assertion } });
    assert.equal(replay.status, 401);
    // And on the used challenge: it is consumed.
    const again = await app.request("POST", "/auth/2fa/passkey/verify", { body: { challenge, response: first.assertion } });
    assert.equal(again.status, 401);

    const other = await app.register("Quinn", "quinn@example.com");
    assert.equal((await app.request("DELETE", `/auth/passkeys/${registered.id}`, { token: other.pair.access_token, body: { currentPassword: PASSWORD } })).status, 404, "foreign id");
    assert.equal((await app.request("DELETE", `/auth/passkeys/${registered.id}`, { token: pair.access_token })).status, 400, "no proof: the registration token has no fresh second factor");
    assert.equal((await app.request("DELETE", `/auth/passkeys/${registered.id}`, { token: signedIn.access_token })).status, 204);
    assert.equal(await app.db.passkey.count({ where: { userId } }), 0);
    const plain = await app.login("Pia", PASSWORD);
    assert.ok((plain.body as TokenPair).access_token, "no second factor left: tokens");
  });

  test("a second passkey needs the password or a fresh second factor; a password change deletes every passkey", async () => {
    const { userId, pair } = await app.register("Pax", "pax@example.com");
    await registerPasskey(pair.access_token, "Phone");
    const stale = await app.request("POST", "/auth/passkeys/registration/options", { token: pair.access_token });
    assert.equal(stale.status, 400, "the registration token has no second factor and no password was sent");
    assert.ok(Array.isArray((stale.body as { errors?: unknown }).errors));
    const signedIn = await answerWithPasskey(await challengeFor(app, "Pax"));
    assert.equal(signedIn.status, 200);
    const token = (signedIn.body as TokenPair).access_token;
    app.secrets.add(token);
    // A second authenticator (the first already holds this account's credential).
    await cdp.send("WebAuthn.removeVirtualAuthenticator", { authenticatorId });
    authenticatorId = await addAuthenticator();
    await registerPasskey(token, "Key", {});
    assert.equal(await app.db.passkey.count({ where: { userId } }), 2);

    const changed = await app.request("POST", "/auth/password", { token, body: { currentPassword: PASSWORD, newPassword: "a different passphrase" } });
    assert.equal(changed.status, 204, changed.text);
    app.secrets.add("a different passphrase");
    assert.equal(await app.db.passkey.count({ where: { userId } }), 0);
  });
});
