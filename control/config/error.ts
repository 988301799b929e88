/**
 * A configuration or startup-check failure: one line naming the key and what to do. The process
 * prints it and exits with EX_CONFIG (78) from sysexits.h.
 */
export class ConfigError extends Error {
  static readonly EXIT_CODE = 78;
  override readonly name = "ConfigError";
  constructor(
    readonly key: string,
    readonly detail: string,
  ) {
    super(`configuration error: ${key}: ${detail}`);
  }
}
