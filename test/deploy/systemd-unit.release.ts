/**
 * `make unit-test`: deploy/toamaisutaa.service, as written, started by a real systemd (a machine
 * booted with systemd-nspawn, test/harness/nspawn.ts) and installed the way the unit's header
 * says: the system user, /etc/toamaisutaa/config.json (root:toamaisutaa, 0640), the built code in
 * /opt/toamaisutaa. Checks that every hardening line is in force on the running server (no
 * capabilities, no new privileges, a seccomp filter, read-only system, the unit's limits), that
 * it answers /healthz and /readyz, that a bot under it records the Teams fixture's tone into the
 * state directory, and that `systemctl stop` ends it cleanly within TimeoutStopSec.
 *
 * Not a *.test.ts file: it needs root, systemd-container and `make build`, so it runs before each
 * release (`make build unit-test`), not in `make test`.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { execFile } from "node:child_process";
import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { describe, test } from "node:test";
import { hear, workerPid } from "../bot/fixtures/media.ts";
import { startTeamsFixture } from "../fixture/teams/server.ts";
import { holdMediaLock } from "../harness/media-lock.ts";
import { addSystemUser, bootMachine } from "../harness/nspawn.ts";
import { recordTone } from "../harness/record-tone.ts";
import { freePort } from "../harness/free-port.ts";

await holdMediaLock();

const run = promisify(execFile);

const PROJECT = resolve(import.meta.dirname, "../..");
const UNIT = "toamaisutaa.service";
const TOKEN = randomBytes(18).toString("base64url");

/** A field of /proc/<pid>/status, as the kernel writes it. */
const statusField = (pid: number, field: string): string => new RegExp(`^${field}:\\s+(.*)$`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? "";
const limit = (pid: number, name: string): string => readFileSync(`/proc/${pid}/limits`, "utf8").split("\n").find((l) => l.startsWith(name)) ?? "";

describe(`deploy/${UNIT} under systemd`, { timeout: 900_000 }, () => {
  test("starts hardened as its user, answers, records the fixture's tone, stops cleanly", async (t) => {
    assert.ok(existsSync(join(PROJECT, "dist/control.js")), "run `make build` first");
    const fixture = await startTeamsFixture();
    t.after(() => fixture.close());
    const port = await freePort();
    let user = { uid: -1, gid: -1 };

    const machine = await bootMachine({
      bindReadOnly: { [PROJECT]: "/opt/toamaisutaa" },
      // The installation steps of the unit's header, in the machine's root, then enabled.
      async prepare(root) {
        user = await addSystemUser(root, "toamaisutaa", "/var/lib/toamaisutaa");
        const etc = (...p: string[]) => join(root, "etc", ...p);
        mkdirSync(etc("toamaisutaa"));
        chownSync(etc("toamaisutaa"), 0, user.gid);
        chmodSync(etc("toamaisutaa"), 0o750);
        const config = {
          PORT: port,
          HOST: "127.0.0.1",
          BOT_ACCESS_TOKEN: TOKEN,
          MEETING_ALLOWED_HOSTS: fixture.hostPort,
          LocalLogin: { SigningKey: randomBytes(32).toString("base64") },
          Mail: { Transport: "file" },
        };
        writeFileSync(etc("toamaisutaa/config.json"), JSON.stringify(config), { mode: 0o640 });
        chownSync(etc("toamaisutaa/config.json"), 0, user.gid);
        copyFileSync(join(PROJECT, "deploy", UNIT), etc("systemd/system", UNIT));
        mkdirSync(etc("systemd/system/multi-user.target.wants"), { recursive: true });
        symlinkSync(`../${UNIT}`, etc("systemd/system/multi-user.target.wants", UNIT));
      },
    });
    t.after(() => machine.halt());

    await machine.waitForJournal(UNIT, /"msg":"listening"/, 180_000);
    const show = async (...props: string[]) =>
      Object.fromEntries((await machine.exec("systemctl", "show", UNIT, ...props.flatMap((p) => ["-p", p]))).trim().split("\n").map((l) => l.split(/=(.*)/s).slice(0, 2)));
    const state = await show("ActiveState", "MainPID", "User", "NRestarts");
    assert.equal(state.ActiveState, "active", JSON.stringify(state));
    assert.equal(state.NRestarts, "0");

    // The unit's main process (sh exec'd node) in the machine's pid namespace, and as seen here.
    const server = Number(state.MainPID);
    assert.ok(server > 0, JSON.stringify(state));
    const hostPid = Number(
      readdirSync("/proc").find((p) => {
        if (!/^\d+$/.test(p)) return false;
        try {
          const ns = statusField(Number(p), "NSpid").split(/\s+/);
          return ns.length > 1 && Number(ns.at(-1)) === server && readFileSync(`/proc/${p}/cmdline`, "utf8").includes("/opt/toamaisutaa/dist/control.js");
        } catch {
          return false;
        }
      }),
    );
    assert.ok(hostPid > 0, "the server process seen from the host");
    assert.equal(statusField(hostPid, "Uid").split(/\s+/)[0], String(user.uid), "runs as toamaisutaa");
    assert.equal(statusField(hostPid, "NoNewPrivs"), "1", "NoNewPrivileges");
    assert.equal(statusField(hostPid, "Seccomp"), "2", "a system call filter");
    assert.equal(statusField(hostPid, "CapBnd"), "0000000000000000", "no capability in the bounding set");
    assert.equal(statusField(hostPid, "CapEff"), "0000000000000000");
    // The unit's limits, as far as the machine's own hard limits let systemd raise them (nspawn
    // here runs without CAP_SYS_RESOURCE: 20000 open files, no realtime priority).
    const initLimits = await machine.exec("cat", "/proc/1/limits");
    for (const [name, want] of [["Max open files", 65536], ["Max realtime priority", 8]] as const) {
      const hard = Number(initLimits.split("\n").find((l) => l.startsWith(name))?.slice(name.length).trim().split(/\s+/)[1]);
      const expected = String(Number.isFinite(hard) ? Math.min(want, hard) : want);
      assert.deepEqual(limit(hostPid, name).slice(name.length).trim().split(/\s+/).slice(0, 2), [expected, expected], name);
    }
    // ProtectSystem=strict: only the state directory is writable.
    const writes = (
      await run("nsenter", ["--target", String(hostPid), "--mount", "--", "sh", "-c", "touch /usr/x /etc/x /opt/toamaisutaa/x 2>&1; touch /var/lib/toamaisutaa/probe && echo state-writable"]).catch(
        (error: { stdout?: string }) => ({ stdout: error.stdout ?? "" }),
      )
    ).stdout;
    assert.match(writes, /state-writable/);
    assert.equal((writes.match(/Read-only file system/g) ?? []).length, 3, writes);
    const exposure = await machine.exec("systemd-analyze", "security", "--no-pager", UNIT);
    const rating = /Overall exposure level for \S+: ([\d.]+) (\S+)/.exec(exposure);
    assert.ok(rating && Number(rating[1]) <= 2, `systemd-analyze security of the running unit: ${rating?.[0] ?? exposure.slice(-400)}`);
    t.diagnostic(rating[0]);

    const url = `http://127.0.0.1:${port}`;
    assert.equal((await fetch(`${url}/healthz`)).status, 200);
    const ready = await fetch(`${url}/readyz`);
    assert.equal(ready.status, 200, await ready.text());

    // A bot under the unit: Chromium, PulseAudio and ffmpeg within the same sandbox.
    const meeting = fixture.createMeeting({ lobby: true, tone: { frequency: 440 } });
    let workerUid = "";
    const done = await recordTone({
      url,
      token: TOKEN,
      meeting,
      seconds: 5,
      async whileRecording(id) {
        const pid = await workerPid(id);
        assert.ok(pid, "the worker of the session");
        workerUid = statusField(pid, "Uid").split(/\s+/)[0] ?? "";
        assert.equal(statusField(pid, "NoNewPrivs"), "1", "the worker inherits the sandbox");
      },
    });
    assert.equal(workerUid, String(user.uid));
    assert.equal(done.status, "stopped", JSON.stringify(done));
    const file = String(done.recording_file);
    const onHost = join(machine.root, file.startsWith("/") ? file : join("var/lib/toamaisutaa", file));
    assert.ok(existsSync(onHost), `${file} in the state directory`);
    const heard = await hear(onHost);
    assert.ok(heard.durationSec > 4, `duration ${heard.durationSec}`);
    assert.ok(Math.abs(heard.frequency - 440) <= 10, `frequency ${heard.frequency}`);

    // systemctl stop: SIGTERM, the drain, exit 0, well within TimeoutStopSec.
    const started = Date.now();
    await machine.exec("systemctl", "stop", UNIT);
    const stoppedMs = Date.now() - started;
    const after = await show("ActiveState", "Result", "ExecMainStatus", "ExecMainCode");
    assert.equal(after.ActiveState, "inactive", JSON.stringify(after));
    assert.equal(after.Result, "success", JSON.stringify(after));
    assert.equal(after.ExecMainStatus, "0", JSON.stringify(after));
    assert.ok(stoppedMs < 60_000, `stopped in ${stoppedMs} ms`);
    assert.ok((await machine.journal(UNIT)).some((l) => l.includes('"msg":"shutting down"')), "the server drained on SIGTERM");
    t.diagnostic(`systemctl stop took ${stoppedMs} ms`);
  });
});
