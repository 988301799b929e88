/**
 * `make image-test`: the image `make image` built, started the way a container runtime starts it
 * (its own entrypoint, command, user and environment; buildah run, chroot isolation, host
 * network), with a host folder as its /data volume. Checks that it answers /healthz and /readyz,
 * that its HEALTHCHECK passes, that the server and its worker run as the image's non-root user
 * with no compiler in the image, that a bot in it records the tone of the Teams fixture (running
 * on the host, reached on 127.0.0.1), and that SIGTERM to its PID 1 (tini) ends it with 0.
 *
 * Not a *.test.ts file: it needs the image and takes minutes, so it runs before each release
 * (`make image image-test`), not in `make test`.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, test } from "node:test";
import { promisify } from "node:util";
import { startTeamsFixture } from "../fixture/teams/server.ts";
import { hear, workerPid } from "../bot/fixtures/media.ts";
import { holdMediaLock } from "../harness/media-lock.ts";
import { recordTone } from "../harness/record-tone.ts";
import { startServiceProcess } from "../harness/external-service.ts";
import { freePort } from "../harness/free-port.ts";
import { statFields } from "../../shared/process/proc-stat.ts";

await holdMediaLock();

const run = promisify(execFile);
const IMAGE = process.env.IMAGE ?? "localhost/toamaisutaa:latest";
const BUILDAH = ["--storage-driver", "vfs"];
const TOKEN = randomBytes(18).toString("base64url");

interface ImageConfig {
  User: string;
  Env: string[];
  Entrypoint: string[] | null;
  Cmd: string[] | null;
  WorkingDir: string;
  Volumes: Record<string, unknown> | null;
  Healthcheck?: { Test: string[] };
}

const buildah = async (...args: string[]): Promise<string> => (await run("buildah", [...BUILDAH, ...args], { maxBuffer: 64 << 20 })).stdout.trim();

/** uid from /proc/<pid>/status (real, effective, saved, fs). */
const uidOf = (pid: number): number[] => (/^Uid:\s+(.*)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? "").split(/\s+/).map(Number);
const cmdlineOf = (pid: number): string => readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
const parentOf = (pid: number): number => Number(statFields(readFileSync(`/proc/${pid}/stat`, "utf8"))[1]);

describe(`the image ${IMAGE}`, { timeout: 900_000 }, () => {
  test("starts as non-root, answers health and readiness, records the fixture's tone, stops on SIGTERM", async (t) => {
    const container = await buildah("from", "--pull-never", IMAGE);
    t.after(() => buildah("rm", container));
    const config = (JSON.parse(await buildah("inspect", "--type", "container", container)) as { Docker: { config: ImageConfig } }).Docker.config;
    const [uid, gid] = config.User.split(":").map(Number);
    assert.ok(uid !== undefined && uid > 0 && gid !== undefined && gid > 0, `the image runs as a numeric non-root user: ${config.User}`);
    assert.deepEqual(Object.keys(config.Volumes ?? {}), ["/data"]);
    assert.deepEqual(config.Entrypoint?.slice(0, 1), ["/usr/bin/tini"]);
    assert.ok(config.Healthcheck?.Test.join(" ").includes("/healthz"), "HEALTHCHECK on /healthz");

    // The runtime stage carries no compiler and no development package.
    const tools = await buildah("run", "--isolation", "chroot", container, "--", "sh", "-c", "for t in gcc g++ cc make python3; do command -v $t; done; ls node_modules | grep -xE 'tsx|esbuild|typescript|eslint|prisma' || true");
    assert.equal(tools, "", `compilers or development packages in the image: ${tools}`);

    // buildah 1.28 mounts a volume of its own on each VOLUME of the image and, in chroot
    // isolation, that mount may land over a --volume given for the same path: the working
    // container forgets the declaration (checked above), so the host folder is /data.
    await buildah("config", "--volume", "/data-", container);
    const data = mkdtempSync(join(tmpdir(), "toa-image-"));
    chownSync(data, uid, gid);
    t.after(() => rmSync(data, { recursive: true, force: true }));
    const fixture = await startTeamsFixture();
    t.after(() => fixture.close());
    const port = await freePort();
    const env: Record<string, string> = {
      PORT: String(port),
      BOT_ACCESS_TOKEN: TOKEN,
      MEETING_ALLOWED_HOSTS: fixture.hostPort,
      LocalLogin__SigningKey: randomBytes(32).toString("base64"),
      Mail__Transport: "file",
    };
    const command = [...(config.Entrypoint ?? []), ...(config.Cmd ?? [])];
    const service = await startServiceProcess({
      command: "buildah",
      args: [...BUILDAH, "run", "--isolation", "chroot", "--network", "host", "--volume", `${data}:/data`, ...Object.entries(env).flatMap(([k, v]) => ["--env", `${k}=${v}`]), container, "--", ...command],
      env: { PATH: process.env.PATH ?? "/usr/sbin:/usr/bin:/sbin:/bin" },
      timeoutMs: 180_000,
    });
    // The buildah process ends when the container's PID 1 does; SIGTERM goes to that PID 1.
    const serverPid = Number((JSON.parse(service.lines.find((l) => l.includes('"msg":"listening"')) ?? "{}") as { pid?: number }).pid);
    const init = parentOf(serverPid);
    assert.match(cmdlineOf(init), /^\/usr\/bin\/tini /, "the server's parent is tini");
    t.after(() => {
      for (const pid of [serverPid, init]) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
    });
    assert.equal(uidOf(serverPid)[0], uid, "the server runs as the image's user");
    assert.equal(uidOf(serverPid)[1], uid);

    const url = `http://127.0.0.1:${port}`;
    const health = await fetch(`${url}/healthz`);
    assert.equal(health.status, 200);
    const ready = await fetch(`${url}/readyz`);
    assert.equal(ready.status, 200, await ready.text());
    const check = await run("buildah", [...BUILDAH, "run", "--isolation", "chroot", "--network", "host", "--env", `PORT=${port}`, container, "--", ...(config.Healthcheck?.Test.slice(1) ?? [])]).then(
      () => 0,
      (error: { code?: number }) => error.code ?? 1,
    );
    assert.equal(check, 0, "the image's HEALTHCHECK command passes");

    const meeting = fixture.createMeeting({ lobby: true, tone: { frequency: 440 } });
    let worker = { cmdline: "", uid: -1 };
    const done = await recordTone({
      url,
      token: TOKEN,
      meeting,
      seconds: 5,
      async whileRecording(id) {
        const pid = await workerPid(id);
        assert.ok(pid, "the worker of the session");
        worker = { cmdline: cmdlineOf(pid), uid: uidOf(pid)[0] ?? -1 };
      },
    });
    assert.match(worker.cmdline, /\/app\/dist\/worker\.js/, "the worker is the built bundle");
    assert.equal(worker.uid, uid, "the worker runs as the image's user");
    assert.equal(done.status, "stopped", JSON.stringify(done));
    const file = String(done.recording_file);
    assert.match(file, /^\/data\/recordings\//, "the recording is on the volume");
    const onHost = join(data, file.slice("/data/".length));
    assert.ok(existsSync(onHost), `${onHost} on the volume; it holds ${readdirSync(data, { recursive: true }).join(", ")}`);
    const heard = await hear(onHost);
    assert.ok(heard.durationSec > 4, `duration ${heard.durationSec}`);
    assert.ok(Math.abs(heard.frequency - 440) <= 10, `frequency ${heard.frequency}`);

    // Only tini is signalled (buildah itself would kill its subprocess on SIGTERM); buildah run
    // ends with the exit code of the container's command.
    const exited = once(service.child, "exit") as Promise<[number | null]>;
    process.kill(init, "SIGTERM");
    const [code] = await Promise.race([exited, sleep(90_000).then(() => [-1] as [number])]);
    assert.equal(code, 0, `SIGTERM to tini ends the container with 0:\n${service.lines.slice(-5).join("\n")}`);
    assert.ok(service.lines.some((l) => l.includes('"msg":"shutting down"')), "the server drained on SIGTERM");
  });
});
