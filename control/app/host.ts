/**
 * What a host program embedding the service may pass to the factory: delivery hooks, an audit
 * callback, a role provider for local tokens (login-service.md Authentication 3) and a faster
 * password hasher for tests. The standalone server fills hooks from configuration.
 */
export interface HookMessage {
  /** Recipient address. */
  to: string;
  userId: string;
  userName: string | null;
  /** The raw secret: exists in the clear only for this call. */
  token?: string;
  password?: string;
  link?: string;
}

export interface DeliveryHooks {
  passwordReset?: (message: HookMessage) => Promise<void>;
  emailVerification?: (message: HookMessage) => Promise<void>;
  magicLink?: (message: HookMessage) => Promise<void>;
  adminPasswordIssued?: (message: HookMessage) => Promise<void>;
  invitation?: (message: HookMessage) => Promise<void>;
}

export interface AuditEvent {
  audit: string;
  userId: string | null;
  familyId?: string | null;
  reason?: string | null;
  [key: string]: unknown;
}

/** Password hashing as the identity service uses it; the default is PBKDF2 (control/auth/passwords). */
export interface PasswordHasher {
  hash(password: string): Promise<string>;
  /** `needsRehash` when the stored hash used a retired pepper or fewer iterations than configured. */
  verify(password: string, stored: string): Promise<{ ok: boolean; needsRehash: boolean }>;
}

export interface HostHooks {
  hooks: DeliveryHooks;
  onAudit?: (event: AuditEvent) => void;
  /** Roles for a locally issued token's subject; without one, local tokens carry no roles. */
  roleProvider?: (userId: string) => Promise<string[]> | string[];
  /** Replaces the configured hasher (tests use a cheap one; a host may bring its own). */
  passwordHasher?: PasswordHasher;
}
