/**
 * Shared set-up of the identity-service suites: the real server on a fresh database with a cheap
 * (but real, PBKDF2) hasher, a movable clock, captured hook messages and audit events.
 */
import type { AuthContext } from "../../control/auth/context.ts";
import { signInStoreFor } from "../../control/auth/sign-in/sign-in-store.ts";
import { sessionStoreFor } from "../../control/auth/tokens/session-store.ts";
import { randomUUID } from "node:crypto";
import { SignJWT } from "jose";
import type { AuditEvent, HookMessage, PasswordHasher } from "../../control/app/host.ts";
import { createPbkdf2Hasher } from "../../control/auth/passwords/pbkdf2.ts";
import type { Db } from "../../control/db/client.ts";
import type { RawTree } from "../../control/config/sources.ts";
import { merge } from "../../control/config/sources.ts";
import { startTestApp, TEST_SIGNING_KEY, type TestApp, type TestResponse } from "../harness/app.ts";
import type { Provider } from "../harness/databases.ts";

/** 1,000 iterations: the real code path at a fraction of the cost (the real cost is benchmarked). */
export const cheapHasher = (pepper: { version: number; secret: string | undefined } = { version: 0, secret: undefined }, retired = new Map<number, string>()): PasswordHasher =>
  createPbkdf2Hasher({ iterations: 1000, saltBytes: 16, hashBytes: 32, pepper, retired });

export interface Clock {
  now(): Date;
  advance(ms: number): void;
}

export function movableClock(): Clock {
  let offset = 0;
  return { now: () => new Date(Date.now() + offset), advance: (ms) => void (offset += ms) };
}

export interface AuthTestApp extends TestApp {
  db: Db;
  clock: Clock;
  mail: HookMessage[];
  audits: AuditEvent[];
  /** Every secret the suite saw (passwords, tokens): none may appear in a log line. */
  secrets: Set<string>;
  register(userName: string, email: string, password?: string): Promise<{ userId: string; pair: TokenPair }>;
  login(identifier: string, password: string): Promise<TestResponse>;
  /** Waits for background work (reset mail) queued so far. */
  settle(): Promise<void>;
}

export interface TokenPair {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  token_type: string;
  recovery_codes_running_low: boolean | null;
  device_token: string | null;
  device_expires_in: number | null;
}

export const PASSWORD = "correct horse battery staple";

/** Defaults of the suites: no per-address limit (suites race many requests), a short floor. */
const BASE: RawTree = {
  LocalLogin: { AllowSelfRegistration: true, RateLimit: { Enabled: false }, SignInRefusalFloor: "00:00:00.2", TokenCleanupInterval: 0 },
};

/** `hasher: null` uses the configured (production) PBKDF2 hasher. */
export async function startAuthApp(provider: Provider, config: RawTree = {}, hasher: PasswordHasher | null = cheapHasher()): Promise<AuthTestApp> {
  const clock = movableClock();
  const mail: HookMessage[] = [];
  const audits: AuditEvent[] = [];
  const secrets = new Set<string>();
  const app = await startTestApp({
    provider,
    config: merge(BASE, config),
    now: clock.now,
    host: {
      hooks: {
        passwordReset: async (m) => void mail.push(m),
        emailVerification: async (m) => void mail.push(m),
      },
      onAudit: (e) => void audits.push(e),
      ...(hasher ? { passwordHasher: hasher } : {}),
    },
  });
  const db = app.server.database.db;
  const login = (identifier: string, password: string) => {
    secrets.add(password);
    return app.request("POST", "/auth/login", { body: { identifier, password } }).then((r) => track(r));
  };
  const track = (r: TestResponse): TestResponse => {
    const b = r.body as Partial<TokenPair> | undefined;
    if (b?.access_token) secrets.add(b.access_token);
    if (b?.refresh_token) secrets.add(b.refresh_token);
    return r;
  };
  return {
    ...app,
    request: async (...args) => track(await app.request(...args)),
    db,
    clock,
    mail,
    audits,
    secrets,
    login,
    async register(userName, email, password = PASSWORD) {
      secrets.add(password);
      const r = track(await app.request("POST", "/auth/register", { body: { userName, email, password } }));
      if (r.status !== 201) throw new Error(`register ${userName}: ${r.status} ${r.text}`);
      const pair = r.body as TokenPair;
      const cred = await db.passwordCredential.findUniqueOrThrow({ where: { normalizedUserName: userName.toLowerCase() } });
      return { userId: cred.userId, pair };
    },
    async settle() {
      // The background queue is drained by close(); here a short poll suffices for the hook.
      await new Promise((r) => setTimeout(r, 50));
    },
  };
}

/** An access token as the local issuer would sign it, for claims the suites need to control. */
export async function localToken(claims: Record<string, unknown>, options: { issuer?: string; audience?: string; at?: Date } = {}): Promise<string> {
  const now = Math.floor((options.at ?? new Date()).getTime() / 1000);
  return new SignJWT({ iat: now, exp: now + 600, jti: randomUUID(), ...claims })
    .setProtectedHeader({ alg: "HS256" })
    .setIssuer(options.issuer ?? "toamaisutaa")
    .setAudience(options.audience ?? "toamaisutaa")
    .sign(Buffer.from(TEST_SIGNING_KEY, "base64"));
}

export function decodePayload(jwt: string): Record<string, unknown> {
  const part = jwt.split(".")[1] ?? "";
  return JSON.parse(Buffer.from(part, "base64url").toString("utf8")) as Record<string, unknown>;
}

/** The AuthContext the service builds, over a test app's database, for tests that call its modules directly. */
export function contextOf(app: AuthTestApp, provider: Provider): AuthContext {
  return {
    config: app.config,
    db: app.db,
    provider,
    sessions: sessionStoreFor(app.server.database.driver),
    signIn: signInStoreFor(app.server.database.driver),
    logger: app.logs.logger,
    now: app.clock.now,
    hooks: {},
    hasher: cheapHasher(),
    roleProvider: undefined,
    audit: () => {},
    prefix: "/auth",
  };
}

