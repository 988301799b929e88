/**
 * The audio service's priority (worker/browser/audio-priority.ts) on a real process tree that has
 * the browser's shape: a parent whose children are an "audio service" (its command line carries
 * Chromium's sub-type flag) and another helper. Every thread of the service gets the nice value,
 * the other child keeps its own, and a service that dies and comes back as a new process gets it
 * too; the service's pulse thread (libpulse names it "threaded-ml") runs SCHED_RR, and only it.
 * Lowering a nice value needs root (as the worker's service user has in its unit: CAP_SYS_NICE).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { test } from "node:test";
import { createLogger } from "../../shared/log/logger.ts";
import { statFields } from "../../shared/process/proc-stat.ts";
import { AUDIO_SERVICE_NICE, PULSE_THREAD_RR_PRIORITY, keepAudioServicePriority } from "../../worker/browser/audio-priority.ts";

const AUDIO = "--utility-sub-type=audio.mojom.AudioService";
const idle = "setInterval(() => {}, 1000)";
/**
 * The "service": names its main thread as libpulse names its mainloop thread. Not one of Node's
 * helper threads: those name themselves when they first run, which on a loaded machine can come
 * after this script and undo the name (the test then waited for a pulse thread that never was).
 */
const SERVICE = `require("node:fs").writeFileSync("/proc/self/task/" + process.pid + "/comm", "threaded-ml"); ${idle}`;
/**
 * The "browser": starts the service again whenever it exits, as Chromium does after a crash. The
 * flag comes in its environment, not its script: a child not yet past exec() shows the parent's
 * argv, which must not look like a service.
 */
const PARENT = `
const { spawn } = require("node:child_process");
const start = () => spawn(process.execPath, ["-e", ${JSON.stringify(SERVICE)}, "--", process.env.AUDIO_FLAG], { stdio: "ignore" }).on("exit", start);
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
/** [tid, policy (field 41), rt priority (field 40)] of each thread named `name`, and of the rest. */
const policies = (pid: number): { pulse: number[][]; others: number[][] } => {
  const all = readdirSync(`/proc/${pid}/task`).map((tid) => {
    const f = statFields(read(`/proc/${pid}/task/${tid}/stat`));
    return { comm: read(`/proc/${pid}/task/${tid}/comm`).trim(), row: [Number(tid), Number(f[38]), Number(f[37])] };
  });
  return { pulse: all.filter((t) => t.comm === "threaded-ml").map((t) => t.row), others: all.filter((t) => t.comm !== "threaded-ml").map((t) => t.row) };
};
const SCHED_RR = 2;
const realtimeOnlyPulse = (pid: number): boolean => {
  const { pulse, others } = policies(pid);
  return pulse.length === 1 && pulse.every(([, policy, prio]) => policy === SCHED_RR && prio === PULSE_THREAD_RR_PRIORITY) && others.every(([, policy]) => policy === 0);
};
/**
 * The child whose argv holds `flag` as an argument of its own: a child not yet past exec() still
 * shows the parent's argv, whose script holds both flags as text (that matched one child twice).
 */
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

test("every thread of the audio service gets its nice value and its pulse thread SCHED_RR, a restarted service too, other children keep theirs", { skip: process.getuid?.() !== 0 && "lowering a nice value needs root" }, async (t) => {
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
  await until("the service's pulse thread (and only it) under SCHED_RR", () => realtimeOnlyPulse(service));
  assert.ok(policies(other).others.every(([, policy]) => policy === 0), "the other child's threads stay SCHED_OTHER");

  process.kill(service, "SIGKILL");
  const restarted = await until("the restarted audio service", () => {
    const pid = childWith(group, AUDIO);
    return pid !== service && pid;
  });
  await until("the restarted service's threads at the audio nice value", () => niceOfThreads(restarted).length >= 4 && niceOfThreads(restarted).every((n) => n === AUDIO_SERVICE_NICE));
  await until("the restarted service's pulse thread under SCHED_RR", () => realtimeOnlyPulse(restarted));
  assert.ok(niceOfThreads(other).every((n) => n === 0));
});
