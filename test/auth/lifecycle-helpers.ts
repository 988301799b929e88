/**
 * Set-up of the account-lifecycle suites (email change, magic links, admin accounts,
 * invitations): the real server with all five delivery hooks captured (each can be made to
 * throw, or left unregistered), an admin role granted through the host's role provider, and a
 * record of every secret a hook received and of every response text, so each suite can prove no
 * secret reached a response or a log line.
 *
 * The app is shaped like helpers.ts's AuthTestApp, so the two-factor helpers work on it.
 */
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import type { DeliveryHooks, HookMessage } from "../../control/app/host.ts";
import type { RawTree } from "../../control/config/sources.ts";
import { merge } from "../../control/config/sources.ts";
import { startTestApp, type TestResponse } from "../harness/app.ts";
import type { Provider } from "../harness/databases.ts";
import { cheapHasher, movableClock, PASSWORD, type AuthTestApp, type TokenPair } from "./helpers.ts";

export { PASSWORD, type TokenPair };

export type HookName = keyof DeliveryHooks;
export const ALL_HOOKS: HookName[] = ["passwordReset", "emailVerification", "magicLink", "adminPasswordIssued", "invitation"];
export const ADMIN_ROLE = "toa-admin";

export interface Sent {
  hook: HookName;
  message: HookMessage;
}

export interface LifecycleApp extends AuthTestApp {
  sent: Sent[];
  /** Hooks that throw (after recording the message, whose secret still counts as issued). */
  failing: Set<HookName>;
  /** A hook listed here waits for its promise before returning (to prove a response did not wait). */
  hold: Partial<Record<HookName, Promise<void>>>;
  /** Every response text, for the secret scan. */
  responses: string[];
  /** Users the role provider makes administrators. */
  admins: Set<string>;
  /** Registers a user, grants the admin role and returns an access token for it. */
  adminToken(): Promise<string>;
  /** Messages of one hook, oldest first. */
  of(hook: HookName): HookMessage[];
  /** The newest message of a hook, waiting for background delivery up to a bound. */
  next(hook: HookName, after?: number): Promise<HookMessage>;
  /** Asserts that no secret seen so far is in a log line or a response text. */
  assertNoLeaks(): void;
}

export interface LifecycleOptions {
  config?: RawTree;
  /** Hooks to register (default all five; passwordReset is required by startup). */
  hooks?: HookName[];
}

const BASE: RawTree = {
  LocalLogin: { AllowSelfRegistration: true, RateLimit: { Enabled: false }, SignInRefusalFloor: "00:00:00.05", TokenCleanupInterval: 0, MailRequestCooldown: 0 },
  Oidc: { AdminRole: ADMIN_ROLE },
};

export async function startLifecycleApp(provider: Provider, options: LifecycleOptions = {}): Promise<LifecycleApp> {
  const clock = movableClock();
  const sent: Sent[] = [];
  const failing = new Set<HookName>();
  const hold: Partial<Record<HookName, Promise<void>>> = {};
  const secrets = new Set<string>();
  const responses: string[] = [];
  const admins = new Set<string>();
  const hooks: DeliveryHooks = {};
  for (const hook of options.hooks ?? ALL_HOOKS) {
    hooks[hook] = async (message) => {
      for (const secret of [message.token, message.password]) if (secret) secrets.add(secret);
      sent.push({ hook, message });
      await hold[hook];
      if (failing.has(hook)) throw new Error(`test hook ${hook} failing on purpose`);
    };
  }
  const app = await startTestApp({
    provider,
    config: merge(BASE, options.config ?? {}),
    now: clock.now,
    host: {
      hooks,
      roleProvider: (userId) => (admins.has(userId) ? [ADMIN_ROLE] : []),
      passwordHasher: cheapHasher(),
    },
  });
  const db = app.server.database.db;
  const track = (r: TestResponse): TestResponse => {
    responses.push(r.text);
    const b = r.body as Partial<TokenPair> & { challenge?: string } | undefined;
    for (const s of [b?.access_token, b?.refresh_token, b?.device_token, b?.challenge]) if (s) secrets.add(s);
    return r;
  };
  const request: AuthTestApp["request"] = async (...args) => track(await app.request(...args));
  const register = async (userName: string, email: string, password = PASSWORD) => {
    secrets.add(password);
    const r = await request("POST", "/auth/register", { body: { userName, email, password } });
    if (r.status !== 201) throw new Error(`register ${userName}: ${r.status} ${r.text}`);
    const cred = await db.passwordCredential.findUniqueOrThrow({ where: { normalizedUserName: userName.toLowerCase() } });
    return { userId: cred.userId, pair: r.body as TokenPair };
  };
  let adminCount = 0;
  const of = (hook: HookName) => sent.filter((s) => s.hook === hook).map((s) => s.message);
  return {
    ...app,
    request,
    db,
    clock,
    mail: [],
    audits: [],
    secrets,
    sent,
    failing,
    hold,
    responses,
    admins,
    register,
    login: (identifier, password) => {
      secrets.add(password);
      return request("POST", "/auth/login", { body: { identifier, password } });
    },
    async settle() {
      await sleep(50);
    },
    async adminToken() {
      adminCount += 1;
      const { userId } = await register(`admin${adminCount}`, `admin${adminCount}@example.com`);
      admins.add(userId);
      // The role is read when the token is validated, so the registration token now carries it.
      const r = await request("POST", "/auth/login", { body: { identifier: `admin${adminCount}`, password: PASSWORD } });
      assert.equal(r.status, 200, r.text);
      return (r.body as TokenPair).access_token;
    },
    of,
    async next(hook, after = 0) {
      for (let i = 0; i < 200; i += 1) {
        const list = of(hook);
        const last = list[list.length - 1];
        if (list.length > after && last) return last;
        await sleep(10);
      }
      throw new Error(`no ${hook} message arrived`);
    },
    assertNoLeaks() {
      assert.deepEqual(app.logs.leaks(secrets), [], "a secret reached a log line");
      const list = [...secrets].filter((s) => s.length >= 6);
      const hookSecrets = sent.flatMap((s) => [s.message.token, s.message.password]).filter((s): s is string => typeof s === "string");
      for (const text of responses) {
        for (const secret of hookSecrets) assert.ok(!text.includes(secret), "a hook secret reached a response body");
      }
      assert.ok(list.length > 0);
    },
  };
}

/** The token pair's access token claims. */
export function claimsOf(pair: TokenPair): Record<string, unknown> {
  const part = pair.access_token.split(".")[1] ?? "";
  return JSON.parse(Buffer.from(part, "base64url").toString("utf8")) as Record<string, unknown>;
}

export { eventually } from "../harness/eventually.ts";
