/**
 * A webhook configuration that can never deliver is refused at the start (exit 78, one line
 * naming the key) rather than accepted and then failing every event for 24 hours: a WEBHOOK_URL
 * that is not an absolute http(s) URL, and a `whsec_` WEBHOOK_SECRET the Standard Webhooks
 * reference library cannot read (a receiver's `new Webhook(secret)` throws on it too).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { loadConfig } from "../../control/config/index.ts";

/** Runs control/main.ts with exactly `env` (plus PATH) until it exits. */
function runMain(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const dir = mkdtempSync(join(tmpdir(), "wh-config-"));
    const child = spawn(process.execPath, ["--import", "tsx", "control/main.ts"], {
      env: {
        PATH: process.env.PATH ?? "", PORT: "0", HOST: "127.0.0.1", DATABASE_URL: `file:${join(dir, "app.db")}`,
        RECORDINGS_DIR: join(dir, "rec"), LOG_LEVEL: "warn", LocalLogin__Enabled: "false", ...env,
      },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("error", reject);
    child.on("exit", (code) => {
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
      resolve({ code, stderr });
    });
  });
}

describe("webhook settings that can never deliver stop the start", () => {
  for (const [name, env, key] of [
    ["a whsec_ secret whose key is not base64", { WEBHOOK_URL: "http://127.0.0.1:9/hook", WEBHOOK_SECRET: "whsec_abc" }, "WEBHOOK_SECRET"],
    ["a WEBHOOK_URL that is not a URL", { WEBHOOK_URL: "hooks.example.com/recorder" }, "WEBHOOK_URL"],
  ] as const) {
    it(`${name}: exit 78, one line naming ${key}`, async () => {
      const { code, stderr } = await runMain(env);
      assert.equal(code, 78, stderr);
      const lines = stderr.trim().split("\n");
      assert.equal(lines.length, 1, stderr);
      assert.ok(lines[0]?.includes(key), lines[0]);
    });
  }

  it("other URL schemes and an empty whsec_ key are refused; valid forms load", () => {
    assert.throws(() => loadConfig({ WEBHOOK_URL: "ftp://example.com/hook", LocalLogin__Enabled: "false" }), /WEBHOOK_URL/);
    assert.throws(() => loadConfig({ WEBHOOK_URL: "https://example.com/hook", WEBHOOK_SECRET: "whsec_", LocalLogin__Enabled: "false" }), /WEBHOOK_SECRET/);
    for (const secret of ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "my-shared-secret", " whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n"]) {
      const config = loadConfig({ WEBHOOK_URL: "https://example.com/hook", WEBHOOK_SECRET: secret, LocalLogin__Enabled: "false" });
      assert.equal(config.bot.WEBHOOK_SECRET, secret);
    }
  });
});
