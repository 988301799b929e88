/**
 * Configuration sources, later wins (decisions.md): built-in defaults (in the schema), then the
 * JSON file named by CONFIG_FILE, then environment variables where `__` stands for `:`.
 * Keys are matched without regard to case, as .NET configuration does, and folded to the
 * schema's spelling so that a typo can be named precisely.
 */
import { readFileSync } from "node:fs";
import { ConfigError } from "./error.ts";

export type RawTree = { [key: string]: RawValue };
export type RawValue = string | number | boolean | null | RawTree | RawValue[];

/** Sections that live under `Section:Key` names; everything else is a plain bot variable. */
export const SECTIONS = [
  "LocalLogin",
  "TrustedDevices",
  "TwoFactor",
  "Passkeys",
  "Oidc",
  "Mail",
  "Hooks",
  "Links",
  "ForwardedHeaders",
] as const;

export function readConfigFile(path: string): RawTree {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (cause) {
    throw new ConfigError("CONFIG_FILE", `cannot read ${path} (${(cause as Error).message}); fix the path or unset CONFIG_FILE`);
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("the top level is not an object");
    return expandPathKeys(parsed as RawTree);
  } catch (cause) {
    throw new ConfigError("CONFIG_FILE", `${path} is not valid JSON (${(cause as Error).message})`);
  }
}

/**
 * A key written as a path (`"LocalLogin:SigningKey": "..."`), which .NET's JSON configuration
 * reads like the nested form, becomes the nested form; both spellings of one file merge.
 */
export function expandPathKeys(tree: RawTree): RawTree {
  let out: RawTree = {};
  for (const [key, raw] of Object.entries(tree)) {
    const value = isTree(raw) ? expandPathKeys(raw) : raw;
    const nested: RawTree = {};
    setPath(nested, key.split(":"), value);
    out = merge(out, nested);
  }
  return out;
}

/**
 * Environment variables of the sections, as a tree: `LocalLogin__RateLimit__Window` → path. A
 * name written with `:` (`LocalLogin:SigningKey`, possible with env(1) and in container specs)
 * is read the same way, as .NET does.
 */
export function sectionEnv(env: NodeJS.ProcessEnv): RawTree {
  const tree: RawTree = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || !/__|:/.test(name)) continue;
    const parts = name.split(/__|:/);
    const section = SECTIONS.find((s) => s.toLowerCase() === parts[0]?.toLowerCase());
    if (!section) continue;
    setPath(tree, [section, ...parts.slice(1)], value);
  }
  return tree;
}

function setPath(tree: RawTree, path: string[], value: RawValue): void {
  let node = tree;
  for (const [i, key] of path.entries()) {
    if (i === path.length - 1) {
      node[key] = value;
      return;
    }
    const next = node[key];
    if (next === undefined || next === null || typeof next !== "object" || Array.isArray(next)) {
      node[key] = {};
    }
    node = node[key] as RawTree;
  }
}

/** Deep merge; arrays and scalars of `over` replace those of `base`. */
export function merge(base: RawTree, over: RawTree): RawTree {
  const out: RawTree = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const existing = findKey(out, key);
    const prev = existing === undefined ? undefined : out[existing];
    if (existing !== undefined && existing !== key) delete out[existing];
    out[existing ?? key] =
      isTree(prev) && isTree(value) ? merge(prev, value) : value;
  }
  return out;
}

export function isTree(v: unknown): v is RawTree {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function findKey(tree: RawTree, key: string): string | undefined {
  return Object.keys(tree).find((k) => k.toLowerCase() === key.toLowerCase());
}

/**
 * An object whose keys are all array indices (`Nat64Prefixes:0`, `:1`) becomes an array, the
 * way .NET binds indexed keys to a list.
 */
export function indexedToArray(value: RawValue): RawValue {
  if (Array.isArray(value)) return value.map(indexedToArray);
  if (!isTree(value)) return value;
  const keys = Object.keys(value);
  // Only 0..n-1 make a list: `RetiredPeppers:2` is a dictionary keyed by version, not a list.
  if (keys.length > 0 && keys.every((k) => /^\d+$/.test(k)) && keys.map(Number).sort((a, b) => a - b).every((k, i) => k === i)) {
    return keys
      .map(Number)
      .sort((a, b) => a - b)
      .map((k) => indexedToArray(value[String(k)] as RawValue));
  }
  const out: RawTree = {};
  for (const k of keys) out[k] = indexedToArray(value[k] as RawValue);
  return out;
}
