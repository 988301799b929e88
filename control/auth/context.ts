/**
 * What every part of the identity service receives: built once by the auth feature
 * (feature.ts) and passed to each route module and service factory.
 */
import type { Config } from "../config/index.ts";
import type { Db } from "../db/client.ts";
import type { AuditEvent, DeliveryHooks, HostHooks, PasswordHasher } from "../app/host.ts";
import type { Logger } from "../../shared/log/logger.ts";
import type { SignInStore } from "./sign-in/sign-in-store.ts";
import type { SessionStore } from "./tokens/session-store.ts";
import type { Store } from "express-rate-limit";

export interface AuthContext {
  config: Config;
  db: Db;
  /** Which database `db` speaks to, for the few statements that differ (devices/cap-lock.ts). */
  provider: "sqlite" | "postgresql";
  /** Session start (every sign-in's last step) on the driver under Prisma (tokens/session-store.ts). */
  sessions: SessionStore;
  /** Credential, second-factor and lockout statements of a password sign-in (sign-in/sign-in-store.ts). */
  signIn: SignInStore;
  logger: Logger;
  now: () => Date;
  /** Host hooks merged with the configured transports (Mail:Transport, Hooks:Module). */
  hooks: DeliveryHooks;
  hasher: PasswordHasher;
  roleProvider: HostHooks["roleProvider"];
  /** Writes `{audit, userId, familyId, reason}` to the log and calls the host's onAudit. */
  audit(event: AuditEvent): void;
  /** `LocalLogin:EndpointPrefix`, normalised (leading slash, no trailing slash). */
  prefix: string;
  /** The rate limiter's shared store in cluster mode (#19); in memory when absent. */
  rateLimitStore?: Store;
}
