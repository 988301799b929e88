/**
 * Startup checks that depend on configuration alone. Each feature adds its check here; checks
 * that depend on registered hooks run when the app is composed (control/app/startup-checks.ts).
 * Every failure is one ConfigError line: the key and what to do.
 */
import { webhookSecretProblem } from "../webhooks/deliver.ts";
import { checkClusterConfig } from "../cluster/settings.ts";
import { ConfigError } from "./error.ts";
import { WAV_MAX_MINUTES } from "../bot/disk/budget.ts";
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

/** TOTP secrets are sealed with AES-256-GCM: each key must be exactly 32 bytes (issue #14). */
const twoFactorSecretKeys: ConfigCheck = (config) => {
  const tf = config.TwoFactor;
  const bad = (text: string): boolean => {
    const trimmed = text.trim();
    return !/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed) || Buffer.from(trimmed, "base64").length !== 32;
  };
  const howTo = "must be base64 of exactly 32 bytes (AES-256); generate one with `openssl rand -base64 32`";
  if (tf.SecretKey !== undefined && bad(tf.SecretKey)) throw new ConfigError("TwoFactor:SecretKey", howTo);
  for (const [version, key] of Object.entries(tf.RetiredSecretKeys)) {
    if (!/^\d+$/.test(version)) throw new ConfigError(`TwoFactor:RetiredSecretKeys:${version}`, "entries are keyed by their version number");
    if (bad(key)) throw new ConfigError(`TwoFactor:RetiredSecretKeys:${version}`, howTo);
  }
};

/**
 * A WAV's RIFF sizes are 32-bit: 4 GiB is ~372.8 minutes at 48 kHz stereo 16-bit, and the file
 * holds the lobby wait too (ffmpeg records from before the join). Longer settings would lose the
 * end of the longest meetings, so they are refused at the start (FLAC has no such limit).
 */
const recordingLimit: ConfigCheck = (config) => {
  const { RECORDING_FORMAT, MAX_RECORDING_MINUTES, MEETING_WAIT_FOR_LOBBY } = config.bot;
  if (RECORDING_FORMAT !== "wav" || MAX_RECORDING_MINUTES + MEETING_WAIT_FOR_LOBBY <= WAV_MAX_MINUTES) return;
  const most = Math.floor((WAV_MAX_MINUTES - MEETING_WAIT_FOR_LOBBY) * 100) / 100;
  throw new ConfigError(
    "MAX_RECORDING_MINUTES",
    `a WAV holds at most ${WAV_MAX_MINUTES.toFixed(1)} minutes (4 GiB at 48 kHz stereo 16-bit), lobby wait included: with MEETING_WAIT_FOR_LOBBY ${MEETING_WAIT_FOR_LOBBY}, set MAX_RECORDING_MINUTES to ${most} or less, or RECORDING_FORMAT=flac`,
  );
};

const CHECKS: ConfigCheck[] = [signingKey, trustedDevices, adminRole, smtp, links, webhooks, twoFactorSecretKeys, recordingLimit, checkClusterConfig];

export function runConfigChecks(config: Config): void {
  for (const check of CHECKS) check(config);
}

/** Lets a feature module add its own configuration check. */
export function addConfigCheck(check: ConfigCheck): void {
  CHECKS.push(check);
}
