import { pino, type Logger, type LoggerOptions } from "pino";
import { scrubUrlSecrets } from "./url-secrets.ts";

/**
 * Paths pino blanks before a line is written. Secrets (passwords, refresh, reset, device,
 * magic-link, invitation and ingest tokens) must never reach a log line: anything that could
 * carry one is listed here as a last line of defence; code should not log them in the first place.
 */
export const REDACTED_PATHS: readonly string[] = [
  "req.headers.authorization",
  "req.headers.cookie",
  "req.headers['x-toamaisutaa-device']",
  "res.headers['set-cookie']",
  "*.password",
  "*.currentPassword",
  "*.newPassword",
  "*.token",
  "*.refreshToken",
  "*.refresh_token",
  "*.accessToken",
  "*.access_token",
  "*.deviceToken",
  "*.device_token",
  "*.secret",
  // Second-factor codes by the names requests use; not `*.code`, which would blank `err.code`
  // (ENOSPC, ECONNREFUSED, P2002), the one field that says what went wrong.
  "*.body.code",
  "*.recoveryCode",
  "*.totpCode",
  "*.recoveryCodes",
  "*.challenge",
  // Delivery links embed the raw reset / verification / magic-link / invitation token.
  "*.link",
  "password",
  "token",
  "secret",
];

export type { Logger };

export interface LoggerSettings {
  level?: string;
  /** Extra fields on every line (e.g. `{ session_id }` in a worker). */
  base?: Record<string, unknown>;
  /** Where lines go; defaults to stdout. Tests pass a stream to scan every line. */
  destination?: NodeJS.WritableStream;
}

export function createLogger(settings: LoggerSettings = {}): Logger {
  const options: LoggerOptions = {
    level: settings.level ?? process.env.LOG_LEVEL ?? "info",
    base: { pid: process.pid, ...settings.base },
    redact: { paths: [...REDACTED_PATHS], censor: "[redacted]" },
    timestamp: pino.stdTimeFunctions.isoTime,
    // Values of a URL's secret parameters (a meeting's passcode), wherever a line quotes one: an
    // error's message or stack names the URL it failed on, which no path list can foresee.
    hooks: { streamWrite: scrubUrlSecrets },
  };
  return settings.destination
    ? pino(options, settings.destination as pino.DestinationStream)
    : pino(options);
}
