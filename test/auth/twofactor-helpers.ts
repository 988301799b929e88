/**
 * Two-factor steps the second-factor suites share: enrol a user, produce the current TOTP code
 * from the suite's movable clock, sign in through a challenge. Codes are single use per 30 s step,
 * so `freshCode` moves the clock one step on before computing the next code.
 */
import assert from "node:assert/strict";
import { Secret, TOTP } from "otpauth";
import type { TestResponse } from "../harness/app.ts";
import { PASSWORD, type AuthTestApp, type TokenPair } from "./helpers.ts";

export const STEP_MS = 30_000;

export function codeAt(secret: string, at: Date): string {
  return new TOTP({ secret: Secret.fromBase32(secret), algorithm: "SHA1", digits: 6, period: 30 }).generate({ timestamp: at.getTime() });
}

/** A code of a step no earlier code used: the clock moves on one step first. */
export function freshCode(app: AuthTestApp, secret: string): string {
  app.clock.advance(STEP_MS);
  const code = codeAt(secret, app.clock.now());
  app.secrets.add(code);
  return code;
}

export interface Enrolled {
  userId: string;
  userName: string;
  secret: string;
  recoveryCodes: string[];
  /** Access token of the registration session. */
  token: string;
}

export async function registerEnrolled(app: AuthTestApp, userName: string): Promise<Enrolled> {
  const { userId, pair } = await app.register(userName, `${userName.toLowerCase()}@example.com`);
  const enrolled = await enrol(app, pair.access_token);
  return { userId, userName, token: pair.access_token, ...enrolled };
}

export async function enrol(app: AuthTestApp, token: string): Promise<{ secret: string; recoveryCodes: string[] }> {
  const start = await app.request("POST", "/auth/2fa/totp/enroll", { token, body: { currentPassword: PASSWORD } });
  assert.equal(start.status, 200, start.text);
  const { secret } = start.body as { secret: string; otpauthUri: string };
  app.secrets.add(secret);
  const confirm = await app.request("POST", "/auth/2fa/totp/confirm", { token, body: { code: freshCode(app, secret), currentPassword: PASSWORD } });
  assert.equal(confirm.status, 200, confirm.text);
  const { recoveryCodes } = confirm.body as { recoveryCodes: string[] };
  for (const c of recoveryCodes) app.secrets.add(c);
  return { secret, recoveryCodes };
}

export async function challengeFor(app: AuthTestApp, userName: string, extra: { deviceToken?: string; headers?: Record<string, string> } = {}): Promise<string> {
  const r = await loginWith(app, userName, extra);
  assert.equal(r.status, 200, r.text);
  const body = r.body as { two_factor_required?: boolean; challenge?: string };
  assert.equal(body.two_factor_required, true, `expected a challenge: ${r.text}`);
  assert.ok(body.challenge);
  app.secrets.add(body.challenge);
  return body.challenge;
}

export async function loginWith(app: AuthTestApp, userName: string, extra: { deviceToken?: string; headers?: Record<string, string> } = {}): Promise<TestResponse> {
  const body: Record<string, unknown> = { identifier: userName, password: PASSWORD };
  if (extra.deviceToken !== undefined) body.deviceToken = extra.deviceToken;
  return app.request("POST", "/auth/login", { body, headers: extra.headers });
}

export async function verify(app: AuthTestApp, challenge: string, code: string, extra: { rememberDevice?: boolean; deviceLabel?: string; headers?: Record<string, string> } = {}): Promise<TestResponse> {
  const r = await app.request("POST", "/auth/2fa/verify", { body: { challenge, code, ...extra }, headers: extra.headers });
  const pair = r.body as Partial<TokenPair> | undefined;
  if (pair?.device_token) app.secrets.add(pair.device_token);
  return r;
}

/** Password + code (+ remembered device): the token pair of a full two-factor sign-in. */
export async function signInWithCode(app: AuthTestApp, user: Enrolled, extra: { rememberDevice?: boolean; deviceLabel?: string; headers?: Record<string, string> } = {}): Promise<TokenPair> {
  const challenge = await challengeFor(app, user.userName);
  const r = await verify(app, challenge, freshCode(app, user.secret), extra);
  assert.equal(r.status, 200, r.text);
  return r.body as TokenPair;
}
