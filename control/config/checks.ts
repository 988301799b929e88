/**
 * Startup checks that depend on configuration alone. Each feature adds its check here; checks
 * that depend on registered hooks run when the app is composed (control/app/startup-checks.ts).
 * Every failure is one ConfigError line: the key and what to do.
 */
import { webhookSecretProblem } from "../webhooks/deliver.ts";
import { ConfigError } from "./error.ts";
import type { Config } from "./schema.ts";

export type ConfigCheck = (config: Config) => void;

const signingKey: ConfigCheck = (config) => {
  const ll = config.LocalLogin;
  if (!ll.Enabled) return;
  if (ll.SigningKey === undefined && ll.SigningKeys.length === 0) {
    throw new ConfigError(
      "LocalLogin:SigningKey",
      "local login needs a signing key: set LocalLogin:SigningKey to at least 32 random bytes in base64 (e.g. `openssl rand -base64 32`) or list private keys in LocalLogin:SigningKeys",
    );
  }
  if (ll.SigningKey !== undefined) {
    // Surrounding whitespace is a secret file's trailing newline, not part of the key; Node's
    // base64 decoder (tokens/keys.ts) skips it too, so the key signed with is the one checked.
    const key = ll.SigningKey.trim();
    const bytes = /^[A-Za-z0-9+/_-]+={0,2}$/.test(key) ? Buffer.from(key, "base64") : Buffer.alloc(0);
    if (bytes.length < 32) {
      throw new ConfigError("LocalLogin:SigningKey", "must be base64 of at least 32 bytes (HS256 needs a 256-bit key); generate one with `openssl rand -base64 32`");
    }
  }
};

const trustedDevices: ConfigCheck = (config) => {
  if (config.TrustedDevices.Enabled && config.LocalLogin.Enabled && !config.TwoFactor.Enabled) {
    throw new ConfigError("TrustedDevices:Enabled", "trusted devices require two-factor authentication: enable TwoFactor:Enabled or set TrustedDevices:Enabled to false");
  }
};

const adminRole: ConfigCheck = (config) => {
  if (config.Oidc.AdminRole !== undefined && config.Oidc.Authority === undefined) {
    // Local tokens carry no roles without a host role provider, so this is allowed; nothing to check.
  }
};

const smtp: ConfigCheck = (config) => {
  if (config.Mail.Transport === "smtp" && config.Mail.Smtp.Url === undefined) {
    throw new ConfigError("Mail:Smtp:Url", "Mail:Transport is smtp: set Mail:Smtp:Url (e.g. smtp://user:pass@mail.example.com:587)");
  }
};

const links: ConfigCheck = (config) => {
  for (const [name, template] of Object.entries(config.Links)) {
    if (!template.includes("{token}")) {
      throw new ConfigError(`Links:${name}`, "the link template must contain {token}");
    }
  }
};

/**
 * A webhook target that is not an absolute http(s) URL, or a secret no receiver can verify with,
 * would only show as warnings while every event of the next 24 hours goes to the dead-letter
 * directory: refuse them at the start instead.
 */
const webhooks: ConfigCheck = (config) => {
  const { WEBHOOK_URL, WEBHOOK_SECRET } = config.bot;
  if (WEBHOOK_URL !== undefined) {
    let protocol = "";
    try {
      protocol = new URL(WEBHOOK_URL.trim()).protocol;
    } catch {
      // reported below
    }
    if (protocol !== "http:" && protocol !== "https:") {
      throw new ConfigError("WEBHOOK_URL", "must be an absolute http:// or https:// URL (e.g. https://example.com/hooks/recorder)");
    }
  }
  const problem = WEBHOOK_SECRET === undefined ? null : webhookSecretProblem(WEBHOOK_SECRET);
  if (problem !== null) throw new ConfigError("WEBHOOK_SECRET", problem);
};

const CHECKS: ConfigCheck[] = [signingKey, trustedDevices, adminRole, smtp, links, webhooks];

export function runConfigChecks(config: Config): void {
  for (const check of CHECKS) check(config);
}

/** Lets a feature module add its own configuration check. */
export function addConfigCheck(check: ConfigCheck): void {
  CHECKS.push(check);
}
