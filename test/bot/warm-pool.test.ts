/**
 * The warm pool's rules (issue #20) with the fake worker, which speaks the real IPC protocol
 * (`warm` → `warmed`, then `init`): a join takes the warm worker (the session gets its id), the
 * pool refills in the background, never holds a worker a join's slot needs, replaces a crashed
 * one, starts none with WARM_WORKERS=0, and leaves nothing running after shutdown.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join as joinPath } from "node:path";
import { describe, test, type TestContext } from "node:test";
import { sessionPaths } from "../../control/bot/paths.ts";
import { listProcesses } from "../../shared/process/group.ts";
import { startBotApp, waitForSession, type BotApp } from "./fixtures/bot-app.ts";
import { WARM_GO_FILE, waitForWorkers, workers, type WorkerProc } from "./fixtures/warm.ts";

type Json = Record<string, unknown>;
const URL_OK = "https://teams.microsoft.com/meet/123456789?p=abcdef";

async function join(app: BotApp, name = "Bot"): Promise<{ status: number; id: string }> {
  const res = await app.request("POST", "/join", { body: { meeting_url: URL_OK, display_name: name } });
  const session = (res.body as Json).session as Json | undefined;
  return { status: res.status, id: String(session?.session_id ?? "") };
}

async function stopAndWait(app: BotApp, id: string): Promise<void> {
  await app.request("POST", `/stop/${id}`);
  await waitForSession(app, id, (s) => s.status === "stopped", 30_000);
}

/** A join while the only warm worker is still starting (FAKE_WARM: it fails, or is held). */
async function joinOnStartingWarm(t: TestContext, mode: "fail" | "hold"): Promise<{ app: BotApp; warm: WorkerProc; joined: { status: number; id: string } }> {
  process.env.FAKE_WARM = mode;
  t.after(() => delete process.env.FAKE_WARM);
  const app = await startBotApp(t, { bot: { WARM_WORKERS: 1 } });
  const [warm] = await waitForWorkers(app.recordingsDir, (w) => w.length === 1 && w[0]!.warm);
  assert.ok(warm);
  const joined = await join(app);
  assert.equal(joined.status, 200);
  assert.equal(joined.id, warm.id, "the join leased the starting worker");
  return { app, warm, joined };
}

describe("warm pool (fake worker)", { concurrency: false, timeout: 120_000 }, () => {
  test("a join takes the warm worker, its session carries the worker's id, and the pool refills", async (t) => {
    const app = await startBotApp(t, { bot: { WARM_WORKERS: 1 } });
    const [warm] = await waitForWorkers(app.recordingsDir, (w) => w.length === 1 && w[0]!.warm);
    assert.ok(warm);
    const joined = await join(app);
    assert.equal(joined.status, 200);
    assert.equal(joined.id, warm.id, "the session is the warm worker's");
    await waitForSession(app, joined.id, (s) => s.status === "recording");
    const now = await waitForWorkers(app.recordingsDir, (w) => w.some((x) => x.warm && x.id !== warm.id));
    // The session still runs on the very process that was warm; a second one waits for the next join.
    assert.ok(now.some((x) => x.id === warm.id && x.pid === warm.pid && !x.warm), JSON.stringify(now));
    assert.equal(now.filter((x) => x.warm).length, 1);
    await stopAndWait(app, joined.id);
    // Used once: the session's worker is gone; the warm one is a different process.
    const after = await waitForWorkers(app.recordingsDir, (w) => !w.some((x) => x.id === warm.id));
    assert.equal(after.filter((x) => x.warm).length, 1);
  });

  test("WARM_WORKERS=0 starts none; a join forks its worker cold", async (t) => {
    const app = await startBotApp(t, { bot: { WARM_WORKERS: 0 } });
    await new Promise((r) => setTimeout(r, 2000));
    assert.deepEqual(await workers(app.recordingsDir), []);
    const joined = await join(app);
    assert.equal(joined.status, 200);
    const running = await waitForWorkers(app.recordingsDir, (w) => w.length === 1);
    assert.equal(running[0]?.id, joined.id);
    await stopAndWait(app, joined.id);
    await new Promise((r) => setTimeout(r, 1000));
    assert.deepEqual(await workers(app.recordingsDir), []);
  });

  test("the pool never holds a worker the slots need: full slots, no warm worker; a free slot, one again", async (t) => {
    const app = await startBotApp(t, { bot: { WARM_WORKERS: 1, MAX_CONCURRENT_SESSIONS: 1 } });
    const [warm] = await waitForWorkers(app.recordingsDir, (w) => w.length === 1 && w[0]!.warm);
    const first = await join(app);
    assert.equal(first.id, warm?.id);
    await waitForSession(app, first.id, (s) => s.status === "recording");
    await new Promise((r) => setTimeout(r, 1500));
    assert.deepEqual((await workers(app.recordingsDir)).filter((w) => w.warm), [], "no warm worker while the only slot is taken");
    const second = await join(app);
    assert.equal(second.status, 503, "the limit counts running sessions");
    await stopAndWait(app, first.id);
    const refilled = await waitForWorkers(app.recordingsDir, (w) => w.some((x) => x.warm));
    assert.equal(refilled.filter((w) => w.warm).length, 1);
    const third = await join(app);
    assert.equal(third.status, 200);
    assert.equal(third.id, refilled.find((w) => w.warm)?.id);
    await stopAndWait(app, third.id);
  });

  test("a crashed warm worker is swept and replaced by a new one", async (t) => {
    const app = await startBotApp(t, { bot: { WARM_WORKERS: 1 } });
    const [warm] = await waitForWorkers(app.recordingsDir, (w) => w.length === 1 && w[0]!.warm);
    assert.ok(warm);
    process.kill(warm.pid, "SIGKILL");
    const next = await waitForWorkers(app.recordingsDir, (w) => w.length === 1 && w[0]!.id !== warm.id);
    assert.ok(next[0]?.warm);
    const old = sessionPaths(app.recordingsDir, warm.id, "wav");
    assert.equal(existsSync(old.workDir), false, "its folder is removed");
    assert.deepEqual((await listProcesses()).filter((p) => p.cmdline.includes(old.sessionDir)), []);
  });

  test("a warm worker that fails while a join waits for it: the session starts its worker cold", async (t) => {
    const { app, warm, joined } = await joinOnStartingWarm(t, "fail");
    const s = await waitForSession(app, joined.id, (x) => x.status === "recording");
    assert.equal(s.status, "recording");
    const running = (await workers(app.recordingsDir)).find((w) => w.id === joined.id);
    assert.ok(running && running.pid !== warm.pid, "a new worker, forked cold, runs the session");
    delete process.env.FAKE_WARM;
    await stopAndWait(app, joined.id);
  });

  test("a join on a warm worker still starting is answered at once; a stop before it is ready is honoured", async (t) => {
    // The warm-up is held: a join that waited for it would never be answered.
    const { app, warm, joined } = await joinOnStartingWarm(t, "hold");
    assert.equal(((await app.request("GET", `/status/${joined.id}`)).body as Json).status, "joining");
    // The stop waits a while for the session to end: the warm-up is let go meanwhile.
    const stopping = app.request("POST", `/stop/${joined.id}`);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(((await app.request("GET", `/status/${joined.id}`)).body as Json).status, "joining", "nothing ends the session before its worker has it");
    // Ready now: the worker gets its init, then the stop asked for meanwhile.
    await writeFile(joinPath(sessionPaths(app.recordingsDir, warm.id, "wav").workDir, WARM_GO_FILE), "");
    const stopped = await stopping;
    assert.ok(stopped.status < 300, JSON.stringify(stopped.body));
    const s = await waitForSession(app, joined.id, (x) => x.status === "stopped", 30_000);
    assert.equal(s.end_reason, "stopped_by_api");
    const running = await waitForWorkers(app.recordingsDir, (w) => !w.some((x) => x.id === joined.id));
    assert.ok(!running.some((x) => x.pid === warm.pid), "the worker has left");
  });

  test("shutdown stops the warm workers: nothing of the control plane keeps running", async (t) => {
    const app = await startBotApp(t, { bot: { WARM_WORKERS: 2 } });
    await waitForWorkers(app.recordingsDir, (w) => w.length === 2 && w.every((x) => x.warm));
    await app.close();
    assert.deepEqual((await listProcesses()).filter((p) => p.cmdline.includes(app.recordingsDir)).map((p) => p.cmdline), []);
  });
});
