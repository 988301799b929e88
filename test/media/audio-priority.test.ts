/**
 * The audio service's priority (worker/browser/audio-priority.ts) on a real process tree that has
 * the browser's shape: a parent whose children are an "audio service" (its command line carries
 * Chromium's sub-type flag) and another helper. Every thread of the service gets the nice value,
 * the other child keeps its own, and a service that dies and comes back as a new process gets it
 * too. Lowering a nice value needs root (as the worker's service user has in its unit: CAP_SYS_NICE).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { test } from "node:test";
import { createLogger } from "../../shared/log/logger.ts";
import { statFields } from "../../shared/process/proc-stat.ts";
import { AUDIO_SERVICE_NICE, keepAudioServicePriority } from "../../worker/browser/audio-priority.ts";

const AUDIO = "--utility-sub-type=audio.mojom.AudioService";
const idle = "setInterval(() => {}, 1000)";
/**
 * The "browser": starts the service again whenever it exits, as Chromium does after a crash. The
 * flag comes in its environment, not its script: a child not yet past exec() shows the parent's
 * argv, which must not look like a service.
 */
const PARENT = `
const { spawn } = require("node:child_process");
const start = () => spawn(process.execPath, ["-e", ${JSON.stringify(idle)}, "--", process.env.AUDIO_FLAG], { stdio: "ignore" }).on("exit", start);
start();
spawn(process.execPath, ["-e", ${JSON.stringify(idle)}, "--", "--type=renderer"], { stdio: "ignore" });
${idle};
`;

const read = (path: string): string => {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
};
const children = (pid: number): number[] =>
  readdirSync(`/proc/${pid}/task`).flatMap((tid) => read(`/proc/${pid}/task/${tid}/children`).split(" ").filter(Boolean).map(Number));
const niceOfThreads = (pid: number): number[] => readdirSync(`/proc/${pid}/task`).map((tid) => Number(statFields(read(`/proc/${pid}/task/${tid}/stat`))[16]));
/** The child whose argv holds `flag` as an argument of its own (not as text inside a script). */
const childWith = (parent: number, flag: string): number | undefined => children(parent).find((pid) => read(`/proc/${pid}/cmdline`).split("\0").includes(flag));

async function until<T>(what: string, check: () => T | undefined | false, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test("every thread of the audio service gets its nice value, a restarted service too, other children keep theirs", { skip: process.getuid?.() !== 0 && "lowering a nice value needs root" }, async (t) => {
  const parent = spawn(process.execPath, ["-e", PARENT], { stdio: "ignore", detached: true, env: { ...process.env, AUDIO_FLAG: AUDIO } });
  const group = parent.pid ?? 0;
  t.after(() => {
    try {
      process.kill(-group, "SIGKILL");
    } catch {
      // Already gone.
    }
  });
  const service = await until("the audio service", () => childWith(group, AUDIO));
  const other = await until("the other child", () => childWith(group, "--type=renderer"));
  // Node's threads are up (V8 platform, libuv pool) before the priority keeper looks.
  await until("the service's threads", () => niceOfThreads(service).length >= 4);

  const keeper = keepAudioServicePriority(group, createLogger({ level: "warn" }));
  t.after(() => keeper.stop());
  await until("the service's threads at the audio nice value", () => niceOfThreads(service).every((n) => n === AUDIO_SERVICE_NICE));
  assert.ok(niceOfThreads(other).every((n) => n === 0), `the other child was reniced: ${niceOfThreads(other).join(" ")}`);

  process.kill(service, "SIGKILL");
  const restarted = await until("the restarted audio service", () => {
    const pid = childWith(group, AUDIO);
    return pid !== service && pid;
  });
  await until("the restarted service's threads at the audio nice value", () => niceOfThreads(restarted).length >= 4 && niceOfThreads(restarted).every((n) => n === AUDIO_SERVICE_NICE));
  assert.ok(niceOfThreads(other).every((n) => n === 0));
});
