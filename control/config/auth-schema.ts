/**
 * Keys of the identity service, with the defaults of login-service.md's Limits table and of
 * decisions.md. Durations are milliseconds once parsed.
 */
import { z } from "zod";
import { bool, duration, int, list, oneOf, text, textDefault } from "./fields.ts";

const ipStorage = oneOf(["None", "Truncated", "Full"] as const, "None");
const signingKey = z.union([z.string(), z.record(z.string(), z.unknown())]);

export const localLoginSchema = z
  .object({
    Enabled: bool(true),
    SigningKey: text(),
    SigningKeys: z.array(signingKey).default([]),
    Issuer: textDefault("toamaisutaa"),
    Audience: text(),
    AccessTokenLifetime: duration("00:15:00", 1000),
    RefreshTokenLifetime: duration("14.00:00:00", 1000),
    RefreshTokenAbsoluteLifetime: duration("90.00:00:00", 1000),
    /** Opt-in grace for retried refreshes of a just-rotated token; 0 = strict reuse detection. */
    RefreshTokenReuseInterval: duration("00:00:00"),
    /** OWASP 2023 guidance for PBKDF2-HMAC-SHA256 is 600,000; lower is refused at startup. */
    Pbkdf2Iterations: int(600_000, 600_000, 50_000_000),
    SaltSizeBytes: int(16, 16, 1024),
    HashSizeBytes: int(32, 32, 1024),
    Pepper: text(),
    PepperVersion: int(1, 1, 1_000_000),
    /** Version number → pepper of that version; hashes made under them still verify. */
    RetiredPeppers: z.record(z.string(), z.string()).default({}),
    LockoutEnabled: bool(true),
    MaxFailedAttempts: int(5, 1, 1000),
    LockoutWindow: duration("00:15:00", 1000),
    LockoutDuration: duration("00:15:00", 1000),
    SignInRefusalFloor: duration("00:00:01"),
    FirstPasswordProofWindow: duration("00:05:00", 1000),
    MinimumPasswordLength: int(8, 1, 4096),
    MaximumPasswordLength: int(128, 8, 4096),
    /**
     * Refuse the 10,000 most common passwords (NIST 800-63B 5.1.1.2, ASVS 6.2.4). Opt-in: Account
     * rule 5 makes length the only rule by default, so a spec-conformant client may choose any
     * password of 8 to 128 characters (e.g. `aaaaaaaa`) and expect it to be accepted.
     */
    RejectCommonPasswords: bool(false),
    PasswordResetTokenLifetime: duration("01:00:00", 1000),
    MailRequestCooldown: duration("00:01:00"),
    InvitationTokenLifetime: duration("7.00:00:00", 1000),
    EmailVerificationTokenLifetime: duration("1.00:00:00", 1000),
    MagicLinkTokenLifetime: duration("00:15:00", 1000),
    RequireVerifiedEmailForPasswordReset: bool(false),
    AllowSelfRegistration: bool(false),
    EndpointPrefix: textDefault("/auth"),
    SessionEndpointPrefix: textDefault("/sessions"),
    IpAddressStorage: ipStorage,
    RateLimit: z
      .object({
        Enabled: bool(true),
        PermitLimit: int(10, 1, 1_000_000),
        Window: duration("00:01:00", 1000),
        Nat64Prefixes: list(),
      })
      .strict()
      .prefault({}),
    TokenCleanupInterval: duration("06:00:00"),
  })
  .strict()
  .superRefine((v, ctx) => {
    if (v.MinimumPasswordLength > v.MaximumPasswordLength) {
      ctx.addIssue({ code: "custom", path: ["MinimumPasswordLength"], message: "must not exceed LocalLogin:MaximumPasswordLength" });
    }
  });

export const trustedDevicesSchema = z
  .object({
    Enabled: bool(true),
    Lifetime: duration("30.00:00:00", 1000),
    MaxDevicesPerUser: int(10, 0, 100_000),
    IpAddressStorage: ipStorage,
    EndpointPrefix: textDefault("/devices"),
  })
  .strict();

export const twoFactorSchema = z
  .object({
    Enabled: bool(true),
    Enforce: bool(false),
    /** Shown by authenticator apps next to the account (otpauth URI issuer). */
    Issuer: textDefault("Toamaisutaa"),
    ChallengeLifetime: duration("00:05:00", 1000),
    /** Wrong codes a challenge survives before it dies. */
    MaxChallengeAttempts: int(5, 1, 100),
    /** Window of the `FreshSecondFactor` policy on `toa_2fa_at` (login-service.md, Authentication 4). */
    FreshnessWindow: duration("00:05:00", 1000),
    /** AES-256-GCM key sealing TOTP secrets at rest: base64 of 32 bytes (twofactor/secret-keys.ts). */
    SecretKey: text(),
    SecretKeyVersion: int(1, 1, 1_000_000),
    /** Version number → key of that version; secrets sealed under them still open and are re-sealed. */
    RetiredSecretKeys: z.record(z.string(), z.string()).default({}),
  })
  .strict();

export const passkeysSchema = z
  .object({
    Enabled: bool(true),
    RpId: textDefault("localhost"),
    RpName: textDefault("Toamaisutaa"),
    Origins: list(["http://localhost:8000"]),
  })
  .strict();

export const oidcSchema = z
  .object({
    Authority: text(),
    ClientId: text(),
    Audience: text(),
    AdminRole: text(),
    RoleClaim: textDefault("roles"),
    /** JWS algorithms accepted from the provider; "none" and HMAC are never accepted. */
    Algorithms: list(["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"]),
    ClockSkew: duration("00:00:30"),
    RequireHttpsMetadata: bool(true),
    /**
     * Accept the provider's ID tokens as bearer tokens (issue #14 finding 4). Off by default: an ID
     * token is minted for a client to read, not for an API to trust (OIDC Core 2, RFC 9068), and
     * one leaked from a browser would otherwise open the API. Accepted ones never prove `auth_time`.
     */
    AcceptIdTokens: bool(false),
  })
  .strict();

const HOOK_KINDS = ["password-reset", "email-verification", "magic-link", "admin-password-issued", "invitation"] as const;

/**
 * `Mail:Hooks`: which hooks the transport registers, named by their `kind` (`magic-link`) or by
 * their hook name (`magicLink`), in any case. An entry naming no hook stops startup: silently
 * skipping a misspelt one would leave its endpoints unmapped (404) with nothing in the log.
 */
const hookKinds = list([...HOOK_KINDS]).transform((entries, ctx) => {
  const squash = (v: string) => v.toLowerCase().replace(/[-_\s]/g, "");
  const kinds = new Set<(typeof HOOK_KINDS)[number]>();
  for (const entry of entries) {
    const kind = HOOK_KINDS.find((k) => squash(k) === squash(entry));
    if (kind === undefined) {
      ctx.addIssue({ code: "custom", message: `expected hooks among ${HOOK_KINDS.join(", ")}, got "${entry}"` });
      return z.NEVER;
    }
    kinds.add(kind);
  }
  return [...kinds];
});

export const mailSchema = z
  .object({
    Transport: oneOf(["none", "smtp", "file"] as const, "none"),
    From: textDefault("no-reply@localhost"),
    Smtp: z.object({ Url: text() }).strict().prefault({}),
    File: z.object({ Directory: textDefault("./data/mail") }).strict().prefault({}),
    Hooks: hookKinds,
  })
  .strict();

export const hooksSchema = z.object({ Module: text() }).strict();

export const linksSchema = z
  .object({
    PasswordReset: textDefault("http://localhost:8000/reset-password?token={token}"),
    EmailVerification: textDefault("http://localhost:8000/verify-email?token={token}"),
    MagicLink: textDefault("http://localhost:8000/magic-link?token={token}"),
    Invitation: textDefault("http://localhost:8000/invitation?token={token}"),
  })
  .strict();

export const forwardedHeadersSchema = z
  .object({
    /** Addresses of reverse proxies whose X-Forwarded-For is believed; nobody else's is. */
    KnownProxies: list(),
    /** CIDR ranges of such proxies. */
    KnownNetworks: list(),
  })
  .strict();
