/**
 * Configuration of the identity service as an operator writes it (decisions.md "Configuration"):
 * environment variables with `__` (or `:`, as .NET reads them), a CONFIG_FILE with nested
 * objects or `Section:Key` path keys, and the real process refusing a bad configuration with one
 * line naming the key and exit code 78.
 */
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { runMain } from "../harness/main-process.ts";
import { jwtVerify } from "jose";
import { loadConfig } from "../../control/config/index.ts";
import { loadSigningKeys } from "../../control/auth/tokens/keys.ts";

const KEY = Buffer.alloc(32, 3).toString("base64");

function configFile(content: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), "toa-auth-cfg-")), "config.json");
  writeFileSync(file, JSON.stringify(content));
  return file;
}

describe("configuration sources", () => {
  it("CONFIG_FILE keys written as paths (`LocalLogin:SigningKey`) read like nested objects", () => {
    const file = configFile({
      "LocalLogin:SigningKey": KEY,
      "LocalLogin:RateLimit:PermitLimit": 4,
      LocalLogin: { MaxFailedAttempts: 7, "RateLimit:Window": "00:02:00" },
      "LocalLogin:RateLimit:Nat64Prefixes:0": "2001:db8:64::/96",
    });
    const c = loadConfig({ CONFIG_FILE: file });
    assert.equal(c.LocalLogin.SigningKey, KEY);
    assert.equal(c.LocalLogin.MaxFailedAttempts, 7);
    assert.equal(c.LocalLogin.RateLimit.PermitLimit, 4);
    assert.equal(c.LocalLogin.RateLimit.Window, 120_000);
    assert.deepEqual(c.LocalLogin.RateLimit.Nat64Prefixes, ["2001:db8:64::/96"]);
  });

  it("environment names with `:` read like `__`; the environment wins over the file", () => {
    const file = configFile({ LocalLogin: { SigningKey: KEY, AccessTokenLifetime: "00:10:00" } });
    const c = loadConfig({ CONFIG_FILE: file, "LocalLogin:AccessTokenLifetime": "00:05:00", LocalLogin__RateLimit__Nat64Prefixes__0: "64:ff9c::/96" });
    assert.equal(c.LocalLogin.AccessTokenLifetime, 300_000);
    assert.deepEqual(c.LocalLogin.RateLimit.Nat64Prefixes, ["64:ff9c::/96"]);
    assert.equal(loadConfig({ "LocalLogin:SigningKey": KEY }).LocalLogin.SigningKey, KEY);
  });

  it("a signing key read from a file with its trailing newline is accepted and signs as the key itself", async () => {
    assert.doesNotThrow(() => loadConfig({ LocalLogin__SigningKey: `${KEY}\n` }));
    const config = loadConfig({ CONFIG_FILE: configFile({ LocalLogin: { SigningKey: `  ${KEY}\r\n` } }) });
    const token = await (await loadSigningKeys(config)).sign({ sub: "u1" });
    const { payload } = await jwtVerify(token, Buffer.from(KEY, "base64"), { algorithms: ["HS256"] });
    assert.equal(payload.sub, "u1");
  });
});

describe("the process refuses a bad configuration: exit 78, one line naming the key", () => {
  for (const [name, env, key] of [
    ["no signing key", {}, "LocalLogin:SigningKey"],
    ["a bad duration in a `:` environment name", { "LocalLogin:SigningKey": KEY, "LocalLogin:AccessTokenLifetime": "15m" }, "LocalLogin:AccessTokenLifetime"],
    ["no password-reset hook", { LocalLogin__SigningKey: KEY }, "Mail:Transport"],
  ] as const) {
    it(name, async () => {
      const { code, stderr } = await runMain(env);
      assert.equal(code, 78, stderr);
      const lines = stderr.trim().split("\n");
      assert.equal(lines.length, 1, stderr);
      assert.ok(lines[0]?.includes(key), lines[0]);
    });
  }
});
