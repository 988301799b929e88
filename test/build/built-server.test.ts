/**
 * The production build (`make build`, scripts/build.ts) runs on plain Node: the bundles start
 * from a folder elsewhere (paths come from shared/runtime/layout.ts, not the working directory),
 * apply the migrations, serve /healthz, /readyz, the API document and the Swagger UI assets, read
 * the common-password list, and fork the built worker (not tsx, not the on-demand bundle), which
 * records the Teams fixture's tone end to end with real Chromium, PulseAudio and ffmpeg.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, test } from "node:test";
import { startTeamsFixture } from "../fixture/teams/server.ts";
import { hear, workerPid } from "../bot/fixtures/media.ts";
import { holdMediaLock } from "../harness/media-lock.ts";
import { recordTone } from "../harness/record-tone.ts";
import { startServiceProcess } from "../harness/external-service.ts";

await holdMediaLock();

const ROOT = resolve(import.meta.dirname, "../..");
const TOKEN = randomBytes(18).toString("base64url");

describe("the built server (dist/, plain node)", { timeout: 600_000 }, () => {
  test("starts from elsewhere, serves health and docs, and its built worker records the tone", async (t) => {
    // Built into a folder of its own inside the project, so a developer's dist/ is left alone.
    mkdirSync(join(ROOT, ".tmp"), { recursive: true });
    const out = mkdtempSync(join(ROOT, ".tmp", "build-test-"));
    execFileSync(process.execPath, ["--import", "tsx", "scripts/build.ts", out], { cwd: ROOT, stdio: "pipe" });
    assert.ok(existsSync(join(out, "control.js")) && existsSync(join(out, "worker.js")));

    const data = mkdtempSync(join(tmpdir(), "toa-built-"));
    const fixture = await startTeamsFixture();
    t.after(() => fixture.close());
    const service = await startServiceProcess({
      command: process.execPath,
      args: ["--enable-source-maps", join(out, "control.js")],
      cwd: data,
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        PORT: "0",
        HOST: "127.0.0.1",
        DATABASE_URL: `file:${join(data, "app.db")}`,
        RECORDINGS_DIR: join(data, "recordings"),
        BOT_ACCESS_TOKEN: TOKEN,
        MEETING_ALLOWED_HOSTS: fixture.hostPort,
        LocalLogin__SigningKey: randomBytes(32).toString("base64"),
        LocalLogin__AllowSelfRegistration: "true",
        LocalLogin__RejectCommonPasswords: "true",
        Mail__Transport: "file",
        Mail__File__Directory: join(data, "mail"),
      },
    });
    t.after(() => service.stop());
    t.after(() => rmSync(data, { recursive: true, force: true }));
    t.after(() => rmSync(out, { recursive: true, force: true }));

    assert.deepEqual(await (await fetch(`${service.url}/healthz`)).json(), { status: "ok" });
    const ready = await fetch(`${service.url}/readyz`);
    assert.equal(ready.status, 200, await ready.text());
    // package.json read beside the bundle's project root; swagger-ui-dist resolved from node_modules.
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
    const doc = (await (await fetch(`${service.url}/openapi.json`)).json()) as { info: { version: string } };
    assert.equal(doc.info.version, pkg.version);
    assert.equal((await fetch(`${service.url}/docs/assets/swagger-ui.css`)).status, 200);
    // The common-password list is found from the bundle.
    const weak = await fetch(`${service.url}/auth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ userName: "weak", email: "weak@example.com", password: "Password1" }),
    });
    assert.equal(weak.status, 400);
    assert.match(JSON.stringify(await weak.json()), /commonly used/);

    const meeting = fixture.createMeeting({ lobby: true, tone: { frequency: 440 } });
    let workerCmdline = "";
    const done = await recordTone({
      url: service.url,
      token: TOKEN,
      meeting,
      seconds: 4,
      async whileRecording(id) {
        const pid = await workerPid(id);
        assert.ok(pid, "the worker process of the session");
        workerCmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
      },
    });
    assert.ok(workerCmdline.includes(join(out, "worker.js")), `the worker runs the built bundle: ${workerCmdline}`);
    assert.ok(!workerCmdline.includes("tsx"), workerCmdline);
    assert.equal(done.status, "stopped", JSON.stringify(done));
    const heard = await hear(String(done.recording_file));
    assert.ok(heard.durationSec > 3, `duration ${heard.durationSec}`);
    assert.ok(Math.abs(heard.frequency - 440) <= 10, `frequency ${heard.frequency}`);

    assert.equal(await service.stop(), 0, "SIGTERM ends the built server with 0");
    const warnings = service.lines.filter((l) => /"level":(40|50|60)/.test(l) && !l.includes("BOT_ACCESS_TOKEN"));
    assert.deepEqual(warnings.filter((l) => /checkpoint|could not bundle/.test(l)), []);
  });
});
