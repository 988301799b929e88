/**
 * Reads the configuration once: defaults, CONFIG_FILE, environment. Any bad or unknown value
 * becomes a ConfigError naming the key (`LocalLogin:Pbkdf2Iterations`, `MAX_CONCURRENT_SESSIONS`)
 * and what to do; main prints that one line and exits 78.
 */
import type { z } from "zod";
import { ConfigError } from "./error.ts";
import { foldKeys, nearest, shapeOf } from "./keys.ts";
import { configSchema, PLAIN_KEYS, type Config } from "./schema.ts";
import { indexedToArray, isTree, merge, readConfigFile, sectionEnv, type RawTree } from "./sources.ts";
import { runConfigChecks } from "./checks.ts";

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const file = env.CONFIG_FILE ? readConfigFile(env.CONFIG_FILE) : {};
  const fromFile: RawTree = {};
  const plain: RawTree = { server: {}, bot: {}, storage: {} };
  for (const [key, value] of Object.entries(file)) {
    const where = plainSection(key);
    if (where) (plain[where] as RawTree)[key] = value;
    else fromFile[key] = value;
  }
  for (const section of ["server", "bot", "storage"] as const) {
    for (const key of PLAIN_KEYS[section]) {
      const value = env[key];
      if (value !== undefined) (plain[section] as RawTree)[key] = value;
    }
  }
  const raw = indexedToArray(merge(merge(fromFile, sectionEnv(env)), plain)) as RawTree;
  const folded = foldKeys(raw, configSchema) as RawTree;
  return parseConfig(folded);
}

/** Parses an already-structured input (tests build configs this way). */
export function parseConfig(input: RawTree | z.input<typeof configSchema>): Config {
  const result = configSchema.safeParse(input);
  if (!result.success) throw toConfigError(result.error, input as RawTree);
  const config = deepFreeze(result.data) as Config;
  runConfigChecks(config);
  return config;
}

function plainSection(key: string): "server" | "bot" | "storage" | undefined {
  if (PLAIN_KEYS.server.includes(key)) return "server";
  if (PLAIN_KEYS.bot.includes(key)) return "bot";
  if (PLAIN_KEYS.storage.includes(key)) return "storage";
  return undefined;
}

function keyName(path: PropertyKey[]): string {
  const parts = path.map(String);
  if (parts[0] === "server" || parts[0] === "bot" || parts[0] === "storage") parts.shift();
  return parts.join(":");
}

function toConfigError(error: z.ZodError, input: RawTree): ConfigError {
  const issue = error.issues[0]!;
  if (issue.code === "unrecognized_keys") {
    const key = issue.keys[0]!;
    const parentSchema = schemaAt(issue.path);
    const known = parentSchema ? Object.keys(shapeOf(parentSchema) ?? {}) : [];
    // At the top level a file also holds the plain keys (RECORDING_FORMAT), which live in sections.
    if (issue.path.length === 0) known.push(...PLAIN_KEYS.server, ...PLAIN_KEYS.bot, ...PLAIN_KEYS.storage);
    const guess = nearest(key, known);
    const full = keyName([...issue.path, key]);
    const hint = guess ? `did you mean ${keyName([...issue.path, guess])}?` : "remove it or check its spelling";
    return new ConfigError(full, `unknown configuration key; ${hint}`);
  }
  const key = keyName(issue.path);
  const hasValue = valueAt(input, issue.path) !== undefined;
  const message = issue.code === "invalid_type" && !hasValue ? "is required" : issue.message;
  // Some schemas already start their message with the key name; do not say it twice.
  return new ConfigError(key, message.startsWith(`${key} `) ? message.slice(key.length + 1) : message);
}

function schemaAt(path: PropertyKey[]): z.ZodType | undefined {
  let s: z.ZodType | undefined = configSchema;
  for (const p of path) s = s ? shapeOf(s)?.[String(p)] : undefined;
  return s;
}

function valueAt(tree: RawTree, path: PropertyKey[]): unknown {
  let v: unknown = tree;
  for (const p of path) v = isTree(v) ? v[String(p)] : Array.isArray(v) ? v[Number(p)] : undefined;
  return v;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object") {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
