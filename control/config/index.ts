export { ConfigError } from "./error.ts";
export { loadConfig, parseConfig } from "./load.ts";
export type { Config, ConfigInput } from "./schema.ts";
export { parseDuration, formatDuration } from "./duration.ts";
