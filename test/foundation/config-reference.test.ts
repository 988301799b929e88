/**
 * The README's configuration reference is complete (issue 13): every key the configuration schema
 * accepts, derived from the zod schemas themselves, is named in the first cell of a README table
 * row, and every key a table row names is one the schema accepts. A key added to a schema without
 * its row fails here.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import type { z } from "zod";
import { loadConfig } from "../../control/config/index.ts";
import { shapeOf } from "../../control/config/keys.ts";
import { configSchema } from "../../control/config/schema.ts";

/** Sections read from plain environment variables (`PORT`, `S3_BUCKET`); the rest are `Section:Key`. */
const PLAIN_SECTIONS = new Set(["server", "bot", "storage"]);
/** Accepted outside the schema: names the file the schema is read from. */
const OUTSIDE_SCHEMA = ["CONFIG_FILE"];

/** Every leaf key of the schema; arrays and maps are one key (`LocalLogin:SigningKeys`). */
function schemaKeys(): string[] {
  const keys: string[] = [...OUTSIDE_SCHEMA];
  const walk = (schema: z.ZodType, path: string[]): void => {
    const shape = shapeOf(schema);
    if (!shape) return void keys.push(path.join(":"));
    for (const [name, child] of Object.entries(shape)) walk(child, [...path, name]);
  };
  for (const [section, schema] of Object.entries(shapeOf(configSchema)!)) {
    if (PLAIN_SECTIONS.has(section)) keys.push(...Object.keys(shapeOf(schema)!));
    else walk(schema, [section]);
  }
  return keys;
}

/** Backticked names in the first cell of every table row of the README. */
function documentedKeys(): Set<string> {
  const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
  const names = new Set<string>();
  for (const line of readme.split("\n")) {
    const cell = /^\|([^|]*)\|/.exec(line)?.[1];
    if (!cell) continue;
    for (const m of cell.matchAll(/`([^`]+)`/g)) names.add(m[1]!.replace(/:(N|\d+)$/, ""));
  }
  return names;
}

const looksLikeKey = (name: string): boolean => /^[A-Z][A-Z0-9_]+$/.test(name) || /^[A-Z][A-Za-z0-9]*:[A-Za-z0-9:]+$/.test(name);

describe("configuration reference", () => {
  const keys = schemaKeys();
  const documented = documentedKeys();

  test("the schema walk finds the keys (a broken walk would make the next test vacuous)", () => {
    assert.ok(keys.length > 90, `only ${keys.length} keys found`);
    for (const k of ["PORT", "MAX_CONCURRENT_SESSIONS", "S3_BUCKET", "LocalLogin:RateLimit:PermitLimit", "TwoFactor:Issuer", "Passkeys:Enabled", "Mail:Smtp:Url"]) {
      assert.ok(keys.includes(k), `${k} derived from the schema`);
    }
  });

  test("every key the schema accepts has a README table row", () => {
    const missing = keys.filter((k) => !documented.has(k));
    assert.deepEqual(missing, [], `keys missing from the README's configuration tables: ${missing.join(", ")}`);
  });

  test("every key a README table names is accepted by the service", () => {
    const known = new Set(keys);
    const stale = [...documented].filter((name) => looksLikeKey(name) && !known.has(name));
    assert.deepEqual(stale, [], `README rows naming keys the schema does not have: ${stale.join(", ")}`);
    // And the loader really accepts them under those names (a sample across sections and forms).
    const config = loadConfig({
      LocalLogin__SigningKey: Buffer.alloc(32, 1).toString("base64"),
      TwoFactor__Issuer: "Example",
      "Passkeys:Enabled": "false",
      LocalLogin__RateLimit__Nat64Prefixes__0: "64:ff9b:1::/48",
      MAX_CONCURRENT_SESSIONS: "3",
    });
    assert.equal(config.TwoFactor.Issuer, "Example");
    assert.equal(config.Passkeys.Enabled, false);
    assert.equal(config.bot.MAX_CONCURRENT_SESSIONS, 3);
  });
});
