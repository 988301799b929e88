import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, loadConfig, parseDuration } from "../../control/config/index.ts";

const KEY = Buffer.alloc(32, 3).toString("base64");
const env = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({ LocalLogin__SigningKey: KEY, ...extra });

function refusal(e: NodeJS.ProcessEnv): ConfigError {
  try {
    loadConfig(e);
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected ConfigError, got ${String(error)}`);
    assert.ok(!error.message.includes("\n"), "one line");
    return error;
  }
  assert.fail("configuration was accepted");
}

describe("durations", () => {
  it("parses the spec's notation and plain seconds", () => {
    assert.equal(parseDuration("00:15:00"), 15 * 60_000);
    assert.equal(parseDuration("14.00:00:00"), 14 * 86_400_000);
    assert.equal(parseDuration("00:00:01.5"), 1500);
    assert.equal(parseDuration("00:00:00.0000001"), 0);
    assert.equal(parseDuration("90"), 90_000);
    assert.equal(parseDuration("1:02:03"), 3_723_000);
  });
  it("refuses what is not a duration", () => {
    for (const bad of ["", "abc", "00:60:00", "25:00:00", "1.2.3", "-00:00:01", "00:15"]) assert.equal(parseDuration(bad), null, bad);
  });
});

describe("configuration sources", () => {
  it("has every default of the spec's Limits tables", () => {
    const c = loadConfig(env());
    assert.equal(c.LocalLogin.AccessTokenLifetime, 15 * 60_000);
    assert.equal(c.LocalLogin.RefreshTokenLifetime, 14 * 86_400_000);
    assert.equal(c.LocalLogin.RefreshTokenAbsoluteLifetime, 90 * 86_400_000);
    assert.equal(c.LocalLogin.Pbkdf2Iterations, 600_000);
    assert.equal(c.LocalLogin.SaltSizeBytes, 16);
    assert.equal(c.LocalLogin.HashSizeBytes, 32);
    assert.equal(c.LocalLogin.PepperVersion, 1);
    assert.equal(c.LocalLogin.MaxFailedAttempts, 5);
    assert.equal(c.LocalLogin.SignInRefusalFloor, 1000);
    assert.equal(c.LocalLogin.MailRequestCooldown, 60_000);
    assert.equal(c.LocalLogin.InvitationTokenLifetime, 7 * 86_400_000);
    assert.equal(c.LocalLogin.EndpointPrefix, "/auth");
    assert.equal(c.LocalLogin.IpAddressStorage, "None");
    assert.equal(c.LocalLogin.RateLimit.PermitLimit, 10);
    assert.equal(c.LocalLogin.TokenCleanupInterval, 6 * 3_600_000);
    assert.equal(c.TrustedDevices.Lifetime, 30 * 86_400_000);
    assert.equal(c.TrustedDevices.MaxDevicesPerUser, 10);
    assert.equal(c.server.PORT, 8000);
    assert.equal(c.server.DATABASE_URL, "file:./data/app.db");
    assert.equal(c.bot.MEETING_WAIT_FOR_LOBBY, 30);
    assert.equal(c.bot.MAX_RECORDING_MINUTES, 240);
    assert.equal(c.bot.RECORDING_FORMAT, "wav");
    assert.equal(c.bot.MEDIA_DIR, "/app/media");
    assert.equal(c.bot.DISABLE_NOISE_SUPPRESSION, true);
    assert.equal(c.bot.MIC_PLAYBACK_ENABLED, false);
    assert.deepEqual(c.bot.MEETING_ALLOWED_HOSTS, ["teams.microsoft.com", "teams.live.com"]);
  });

  it("is frozen", () => {
    const c = loadConfig(env());
    assert.ok(Object.isFrozen(c) && Object.isFrozen(c.LocalLogin) && Object.isFrozen(c.LocalLogin.RateLimit));
    assert.throws(() => {
      (c.LocalLogin as { MaxFailedAttempts: number }).MaxFailedAttempts = 1;
    });
  });

  it("reads __ keys case-insensitively, indexed arrays and decimals", () => {
    const c = loadConfig(
      env({
        localLogin__lockoutWINDOW: "00:30:00",
        LocalLogin__RateLimit__Nat64Prefixes__1: "2001:db8:2::/96",
        LocalLogin__RateLimit__Nat64Prefixes__0: "2001:db8:1::/96",
        LocalLogin__RetiredPeppers__1: "old-pepper",
        MEETING_WAIT_FOR_LOBBY: "0.25",
        MEETING_ALLOWED_HOSTS: "teams.microsoft.com, 127.0.0.1:9999",
      }),
    );
    assert.equal(c.LocalLogin.LockoutWindow, 30 * 60_000);
    assert.deepEqual(c.LocalLogin.RateLimit.Nat64Prefixes, ["2001:db8:1::/96", "2001:db8:2::/96"]);
    assert.deepEqual(c.LocalLogin.RetiredPeppers, { "1": "old-pepper" });
    assert.equal(c.bot.MEETING_WAIT_FOR_LOBBY, 0.25);
    assert.deepEqual(c.bot.MEETING_ALLOWED_HOSTS, ["teams.microsoft.com", "127.0.0.1:9999"]);
  });

  it("minute settings accept a decimal however it is written", () => {
    const c = loadConfig(env({ MEETING_WAIT_FOR_LOBBY: ".5", MAX_RECORDING_MINUTES: "2.", MAX_UPLOAD_MB: " 0.75 " }));
    assert.equal(c.bot.MEETING_WAIT_FOR_LOBBY, 0.5);
    assert.equal(c.bot.MAX_RECORDING_MINUTES, 2);
    assert.equal(c.bot.MAX_UPLOAD_MB, 0.75);
    assert.throws(() => loadConfig(env({ MAX_RECORDING_MINUTES: "1e1" })), /MAX_RECORDING_MINUTES/);
  });

  it("layers defaults < CONFIG_FILE < environment", () => {
    const dir = mkdtempSync(join(tmpdir(), "toa-cfg-"));
    const file = join(dir, "c.json");
    writeFileSync(file, JSON.stringify({ LocalLogin: { SigningKey: KEY, MaxFailedAttempts: 7, LockoutDuration: "01:00:00" }, MAX_CONCURRENT_SESSIONS: 3 }));
    const c = loadConfig({ CONFIG_FILE: file, LocalLogin__MaxFailedAttempts: "9" });
    assert.equal(c.LocalLogin.MaxFailedAttempts, 9);
    assert.equal(c.LocalLogin.LockoutDuration, 3_600_000);
    assert.equal(c.bot.MAX_CONCURRENT_SESSIONS, 3);
  });
});

describe("configuration errors name the key and what to do", () => {
  it("a missing signing key", () => {
    const e = refusal({});
    assert.equal(e.key, "LocalLogin:SigningKey");
    assert.match(e.message, /openssl rand -base64 32/);
  });
  it("a short signing key", () => {
    assert.equal(refusal({ LocalLogin__SigningKey: "c2hvcnQ=" }).key, "LocalLogin:SigningKey");
  });
  it("a typo in a key, with the correction", () => {
    const e = refusal(env({ LocalLogin__MaxFailedAttemps: "3" }));
    assert.equal(e.key, "LocalLogin:MaxFailedAttemps");
    assert.match(e.message, /did you mean LocalLogin:MaxFailedAttempts\?/);
  });
  it("a typo in a plain key of CONFIG_FILE, with the correction", () => {
    const dir = mkdtempSync(join(tmpdir(), "toa-cfg-"));
    const file = join(dir, "c.json");
    writeFileSync(file, JSON.stringify({ RECORDING_FORMATT: "wav" }));
    const e = refusal(env({ CONFIG_FILE: file }));
    assert.equal(e.key, "RECORDING_FORMATT");
    assert.match(e.message, /did you mean RECORDING_FORMAT\?/);
  });
  it("a typo in a nested key", () => {
    assert.match(refusal(env({ LocalLogin__RateLimit__PermitLimt: "3" })).message, /LocalLogin:RateLimit:PermitLimit/);
  });
  it("a value below the iteration floor", () => {
    const e = refusal(env({ LocalLogin__Pbkdf2Iterations: "1000" }));
    assert.equal(e.key, "LocalLogin:Pbkdf2Iterations");
    assert.match(e.message, /between 600000 and 50000000/);
  });
  it("a bad duration, number, boolean and choice", () => {
    assert.match(refusal(env({ LocalLogin__LockoutWindow: "fifteen" })).message, /LocalLogin:LockoutWindow: expected a duration/);
    assert.match(refusal(env({ PORT: "eighty" })).message, /PORT: expected a whole number/);
    assert.match(refusal(env({ LocalLogin__LockoutEnabled: "maybe" })).message, /LocalLogin:LockoutEnabled: expected true or false/);
    assert.match(refusal(env({ RECORDING_FORMAT: "mp3" })).message, /RECORDING_FORMAT: expected one of wav, flac/);
    assert.match(refusal(env({ DATABASE_URL: "mysql://x" })).message, /DATABASE_URL: must start with file:/);
  });
  it("an unreadable or invalid CONFIG_FILE", () => {
    assert.equal(refusal({ CONFIG_FILE: "/nonexistent/c.json" }).key, "CONFIG_FILE");
    const dir = mkdtempSync(join(tmpdir(), "toa-cfg-"));
    writeFileSync(join(dir, "bad.json"), "{ nope");
    assert.match(refusal({ CONFIG_FILE: join(dir, "bad.json") }).message, /not valid JSON/);
  });
  it("trusted devices without two-factor", () => {
    assert.equal(refusal(env({ TwoFactor__Enabled: "false" })).key, "TrustedDevices:Enabled");
  });
});

describe("storage configuration", () => {
  it("defaults to local and names a missing key of the chosen backend", () => {
    assert.deepEqual(loadConfig(env()).storage, { backend: "local" });
    const e = refusal(env({ STORAGE_BACKEND: "azure", AZURE_STORAGE_CONNECTION_STRING: "UseDevelopmentStorage=true" }));
    assert.equal(e.key, "AZURE_STORAGE_CONTAINER");
    assert.match(e.message, /^configuration error: AZURE_STORAGE_CONTAINER: is required when STORAGE_BACKEND=azure/);
    assert.equal(refusal(env({ STORAGE_BACKEND: "s3", S3_REGION: "us-east-1" })).key, "S3_BUCKET");
    const s3 = loadConfig(env({ STORAGE_BACKEND: "S3", S3_BUCKET: "rec", S3_REGION: "x", S3_FORCE_PATH_STYLE: "1", S3_ENDPOINT: "http://127.0.0.1:9000" })).storage;
    assert.deepEqual(s3, { backend: "s3", bucket: "rec", region: "x", endpoint: "http://127.0.0.1:9000", forcePathStyle: true });
  });
});
