// Forks worker/main.ts over IPC the way the supervisor does, against the Teams fixture.
import { fork, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestContext } from "node:test";
import { fromWorkerSchema, type FromWorker, type InitMessage, type ToWorker } from "../../shared/ipc/messages.ts";
import { openJournal, readJournal, type JournalRecord } from "../../shared/journal/index.ts";
import { survivorsMentioning } from "../helpers/audio/leftovers.ts";

const WORKER_ENTRY = new URL("../../worker/main.ts", import.meta.url).pathname;

export interface WorkerRun {
  init: InitMessage;
  child: ChildProcess;
  messages: FromWorker[];
  /** Every stdout line of the worker (pino JSON), for diagnosing a failure. */
  logs: string[];
  send(message: ToWorker): void;
  /** Resolves with the first message (already received or future) matching the predicate. */
  waitFor<T extends FromWorker["type"]>(type: T, predicate?: (m: Extract<FromWorker, { type: T }>) => boolean, timeoutMs?: number): Promise<Extract<FromWorker, { type: T }>>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  journal(): Promise<JournalRecord[]>;
  statuses(): string[];
}

export async function startWorker(t: TestContext, overrides: Partial<InitMessage> & Pick<InitMessage, "meetingUrl">, sendInit = true): Promise<WorkerRun> {
  const root = await mkdtemp(join(tmpdir(), "worker-test-"));
  const sessionId = randomUUID();
  const format = overrides.format ?? "wav";
  const init: InitMessage = {
    type: "init",
    sessionId,
    displayName: "Recorder Bot",
    record: true,
    format,
    recordingPath: join(root, `${sessionId}.${format}`),
    journalPath: join(root, `${sessionId}.journal`),
    workDir: join(root, "work"),
    lobbyWaitMs: 60_000,
    maxRecordingMs: 120_000,
    mic: { enabled: false, disableNoiseSuppression: true },
    chromiumPath: "/usr/bin/chromium",
    logLevel: process.env.LOG_LEVEL ?? "info",
    ...overrides,
  };
  // The supervisor writes the first record before forking (shared/journal records.ts).
  const journal = await openJournal(init.journalPath, { fsync: false });
  await journal.append({
    type: "session",
    session_id: sessionId,
    meeting_url: init.meetingUrl,
    reference: null,
    display_name: init.displayName,
    record: init.record,
    format,
    recording_path: init.record ? init.recordingPath : null,
    created_at: new Date().toISOString(),
  });
  await journal.close();

  const child = fork(WORKER_ENTRY, [], { execArgv: ["--import", "tsx"], stdio: ["ignore", "pipe", "pipe", "ipc"] });
  const logs: string[] = [];
  const collect = (chunk: Buffer) => logs.push(...chunk.toString().split("\n").filter(Boolean));
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  const messages: FromWorker[] = [];
  const waiters = new Set<() => void>();
  child.on("message", (raw) => {
    const message = fromWorkerSchema.parse(raw);
    messages.push(message);
    // The supervisor's turn to start Chromium, given at once (one worker here).
    if (message.type === "launchTurn" && message.phase === "want") child.send({ type: "launchGo" });
    for (const w of waiters) w();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));

  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 30_000))]);
      child.kill("SIGKILL");
    }
    if (process.env.WORKER_LOGS) console.log(`--- worker ${sessionId} log\n${logs.join("\n")}`);
    await rm(root, { recursive: true, force: true });
  });

  const run: WorkerRun = {
    init,
    child,
    messages,
    logs,
    send: (message) => child.send(message),
    waitFor: (type, predicate, timeoutMs = 90_000) =>
      new Promise((resolve, reject) => {
        type M = Extract<FromWorker, { type: typeof type }>;
        const check = () => {
          const hit = messages.find((m): m is M => m.type === type && (!predicate || predicate(m as M)));
          if (hit) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(hit);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no ${type} message within ${timeoutMs} ms; got ${messages.map((m) => m.type === "status" ? `status:${m.status}` : m.type).join(", ")}\n${logs.slice(-15).join("\n")}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      }),
    exited,
    journal: async () => (await readJournal(init.journalPath)).records,
    statuses: () => messages.flatMap((m) => (m.type === "status" ? [m.status] : [])),
  };
  if (sendInit) child.send(init);
  return run;
}

/** Waits for the worker's exit and checks that nothing it started survives (by its workDir). */
export async function finishedAndClean(run: WorkerRun): Promise<{ finished: Extract<FromWorker, { type: "finished" }>; code: number | null; survivors: string[] }> {
  const finished = await run.waitFor("finished", undefined, 120_000);
  const { code } = await run.exited;
  const survivors = await survivorsMentioning(run.init.workDir, 5_000);
  return { finished, code, survivors };
}
