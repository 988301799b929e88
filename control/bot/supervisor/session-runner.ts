/**
 * One session from fork to final status: journal `session` record, fork, `init` → `ready` /
 * `initFailed`, every status and participant count persisted in order, and exactly one end —
 * the worker's `finished`, or the crash path when it exits without one (killed, crashed, hung).
 */
import { mkdir } from "node:fs/promises";
import type { BotSession } from "../../../prisma/generated/sqlite/client.ts";
import type { FinishedMessage, FromWorker, InitMessage, SessionStatus, WorkerResponse } from "../../../shared/ipc/messages.ts";
import { FINAL_STATUSES } from "../../../shared/ipc/messages.ts";
import { openJournal } from "../../../shared/journal/index.ts";
import type { RecordingFormat } from "../../../shared/journal/records.ts";
import { AppError } from "../../http/errors.ts";
import { compileCacheDirOf, evidenceDirOf, sessionPaths, type SessionPaths } from "../paths.ts";
import { automaticLeaveOf } from "../session-view.ts";
import type { ErrorCode } from "../../../shared/recording/error-codes.ts";
import { finalizeSession, type FinalizeDeps } from "./finalize.ts";
import type { WarmLease } from "../warm-pool/pool.ts";
import { killSessionProcesses } from "./orphans.ts";
import { workerEntry } from "./worker-bundle.ts";
import type { LaunchGate } from "./launch-gate.ts";
import { forkWorker, type WorkerProcess } from "./worker-process.ts";
import { metrics } from "../../metrics/index.ts";

/** A worker asked to leave closes its recorder within seconds; past this it is killed. */
const STOP_TIMEOUT_MS = 30_000;
/** An audio request the worker does not answer in this time fails instead of hanging the HTTP call. */
const REQUEST_TIMEOUT_MS = 15_000;

export interface RunnerSettings {
  workerModule: string;
  recordingsDir: string;
  init: Pick<InitMessage, "lobbyWaitMs" | "maxRecordingMs" | "mic" | "chromiumPath" | "logLevel" | "joinTimeoutMs" | "observe" | "listenLowLatency">;
  /** How long a worker asked to leave may take before it is killed (default 30 s). */
  stopTimeoutMs?: number;
  /** Turns to start Chromium, shared by every worker of the control plane (launch-gate.ts). */
  launchGate?: LaunchGate;
}

export class SessionRunner {
  readonly id: string;
  readonly paths: SessionPaths;
  /** Resolves once the session has its final status (or was handed to the next start). */
  readonly done: Promise<void>;
  /** Resolves when the worker has gone (finished, crashed, killed): the slot is free from then on. */
  readonly workerGone: Promise<void>;
  private resolveWorkerGone!: () => void;
  status: SessionStatus = "joining";
  private worker: WorkerProcess | null = null;
  private finished: FinishedMessage | null = null;
  private initFailed: string | null = null;
  private initFailedCode: ErrorCode | null = null;
  private recordingStartedAt: Date | null = null;
  private lobbyAt: Date | null = null;
  private ending = false;
  private stopTimer: NodeJS.Timeout | null = null;
  /** A stop that came before the worker was attached (a warm one still starting). */
  private stopAsked: "stopped_by_api" | "shutdown" | null = null;
  /** DB writes and webhooks of one session happen in arrival order. */
  private chain: Promise<void> = Promise.resolve();
  private resolveDone!: () => void;
  private nextRequestId = 0;
  private readonly pending = new Map<number, (r: WorkerResponse) => void>();

  constructor(
    private readonly deps: FinalizeDeps,
    private readonly settings: RunnerSettings,
    private readonly row: BotSession,
    /** A warm worker from the pool (its id is this session's), or null: fork one cold. */
    private readonly lease: WarmLease | null = null,
  ) {
    this.id = row.id;
    this.paths = sessionPaths(settings.recordingsDir, row.id, this.format);
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    this.workerGone = new Promise((resolve) => (this.resolveWorkerGone = resolve));
  }

  /** The worker has gone (finished, crashed or killed): only storage and the webhook are left. */
  get ended(): boolean {
    return this.ending;
  }

  /** The status the session ends with, once the worker has gone (null before): what listeners are told last. */
  get finalStatus(): SessionStatus | null {
    return this.ending ? this.endStatus() : null;
  }

  /** The worker's own `finished`, else `error` for a start that failed, else `interrupted` (killed, crashed). */
  private endStatus(): SessionStatus {
    return this.finished ? this.finished.status : this.initFailed ? "error" : "interrupted";
  }

  get record(): boolean {
    return this.row.record;
  }

  get format(): RecordingFormat {
    return this.row.recordingFormat === "flac" ? "flac" : "wav";
  }

  private get log() {
    return this.deps.logger.child({ session_id: this.id });
  }

  /**
   * Writes the journal's first record, then the worker: `/join` answers once the journal is
   * written, never after a warm worker still starting (its Chromium can take seconds when many
   * start at once), so the worker is taken or forked and sent `init` in the background.
   */
  async start(): Promise<void> {
    const { paths, row } = this;
    try {
      await mkdir(paths.sessionDir, { recursive: true });
      await mkdir(paths.workDir, { recursive: true });
      const journal = await openJournal(paths.journal, { fsync: true });
      await journal.append({
        type: "session",
        session_id: row.id,
        meeting_url: row.meetingUrl,
        reference: row.reference,
        display_name: row.displayName,
        record: row.record,
        format: this.format,
        recording_path: row.record ? paths.recording : null,
        created_at: row.createdAt.toISOString(),
      });
      await journal.close();
    } catch (err) {
      this.cannotStart(err);
      return;
    }
    void this.attachWorker();
  }

  /** The warm worker once ready (or a cold one), then `init`; a stop asked for meanwhile follows it. */
  private async attachWorker(): Promise<void> {
    const handlers = { onMessage: (m: FromWorker) => this.onMessage(m), onExit: (e: { code: number | null; signal: NodeJS.Signals | null }) => this.onExit(e), onHung: () => this.kill() };
    let worker: WorkerProcess;
    try {
      const warm = this.lease ? await this.lease.take(handlers) : null;
      if (this.lease) this.log.info({ warm: warm !== null }, warm ? "session runs on a warm worker" : "the warm worker failed; starting one cold");
      // Killed while the warm worker was getting ready: the session has ended, its worker goes too.
      if (this.ending) return void warm?.kill();
      worker = warm ?? forkWorker({ ...(await workerEntry(this.settings.workerModule, this.log)), sessionId: this.row.id, marker: this.paths.workDir, logger: this.log, launchGate: this.settings.launchGate, compileCacheDir: compileCacheDirOf(this.settings.recordingsDir), ...handlers });
    } catch (err) {
      this.cannotStart(err);
      return;
    }
    this.worker = worker;
    this.sendInit(worker);
    if (this.stopAsked) this.stop(this.stopAsked);
  }

  private cannotStart(err: unknown): void {
    this.log.error({ err }, "session could not be started");
    this.initFailed = `The session could not be started: ${err instanceof Error ? err.message : String(err)}`;
    this.end();
  }

  private sendInit(worker: WorkerProcess): void {
    const { paths, row } = this;
    worker.send({
      type: "init",
      sessionId: row.id,
      meetingUrl: row.meetingUrl,
      displayName: row.displayName,
      record: row.record,
      format: this.format,
      recordingPath: paths.recording,
      journalPath: paths.journal,
      workDir: paths.workDir,
      timelinePath: paths.timeline,
      ...this.settings.init,
      evidenceDir: evidenceDirOf(this.settings.recordingsDir, row.id),
      automaticLeave: automaticLeaveOf(row),
    });
  }

  stop(reason: "stopped_by_api" | "shutdown"): void {
    if (this.ending) return;
    if (!this.worker) {
      // The worker is not attached yet: it is told as soon as it has its `init`.
      this.stopAsked ??= reason;
      return;
    }
    this.worker.send({ type: "stop", reason });
    const timeoutMs = this.settings.stopTimeoutMs ?? STOP_TIMEOUT_MS;
    this.stopTimer ??= setTimeout(() => {
      this.log.warn({ timeout_ms: timeoutMs }, "worker did not leave in time; killing it");
      this.kill();
    }, timeoutMs);
  }

  /** The crash path on purpose: SIGKILL; the exit handler repairs and stores what was recorded. */
  kill(): void {
    if (this.worker) this.worker.kill();
    else this.end();
  }

  /** An audio operation for the worker (playback, streams), answered by its `response`. */
  request(op: string, args: Record<string, unknown>): Promise<WorkerResponse> {
    const worker = this.worker;
    if (this.ending) return Promise.reject(new AppError("conflict", { message: "The session is not running." }));
    // A warm worker still starting has not been attached yet (start()).
    if (!worker) return Promise.reject(new AppError("conflict", { message: "The bot is still starting; try again once it has joined." }));
    const id = ++this.nextRequestId;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new AppError("service_unavailable", { message: "The bot did not answer in time.", headers: { "Retry-After": "5" } }));
      }, REQUEST_TIMEOUT_MS);
      this.pending.set(id, (r) => {
        clearTimeout(timer);
        resolve(r);
      });
      if (!worker.send({ type: "request", id, op, args })) {
        clearTimeout(timer);
        this.pending.delete(id);
        reject(new AppError("conflict", { message: "The session is not running." }));
      }
    });
  }

  private enqueue(work: () => Promise<void>): void {
    this.chain = this.chain.then(work).catch((err: unknown) => this.log.error({ err }, "session update failed"));
  }

  private onMessage(m: FromWorker): void {
    switch (m.type) {
      case "ready":
        this.log.info({ pids: m.pids }, "worker ready");
        return;
      case "warmed":
        return; // The pool's business, before the worker became this session's.
      case "initFailed":
        this.log.error({ message: m.message }, "worker could not start");
        this.initFailed = m.message;
        this.initFailedCode = m.errorCode ?? "internal";
        // It should exit on its own now; a worker that lingers is killed.
        this.stopTimer ??= setTimeout(() => this.kill(), STOP_TIMEOUT_MS);
        return;
      case "status": {
        // Final statuses are written by the end path, together with the stored file.
        if (FINAL_STATUSES.has(m.status)) return;
        const previous = this.status;
        this.status = m.status;
        const at = new Date(m.at);
        if (m.status === "recording" || m.status === "connected") this.recordingStartedAt ??= at;
        if (previous !== m.status) metrics.sessionStatus(m.status, at, { createdAt: this.row.createdAt, lobbyAt: this.lobbyAt });
        if (m.status === "lobby") this.lobbyAt ??= at;
        const joinedAt = m.joinedAt ? new Date(m.joinedAt) : m.status === "recording" || m.status === "connected" ? at : null;
        this.enqueue(async () => {
          // A row already ended (another instance announced it lost, #19) tells nobody of later steps.
          const written = await this.deps.repo.setStatus(this.id, m.status, { joinedAt });
          // The worker's first `joining` repeats the status the session was created with.
          if (written && previous !== m.status) await this.deps.notifier.statusChanged({ sessionId: this.id, reference: this.row.reference, status: m.status, previous, at });
        });
        return;
      }
      case "participants":
        this.enqueue(() => this.deps.repo.setParticipants(this.id, m.count));
        return;
      case "participantEvent":
        // The same chain as the status events: webhooks leave in the order things happened.
        this.enqueue(() =>
          this.deps.notifier.participant({ sessionId: this.id, reference: this.row.reference, event: m.event, participant: m.participant, offsetSeconds: m.offsetSeconds, at: new Date(m.at) }),
        );
        return;
      case "audioGap":
        // Counted only: the worker logs each burst with the session id (worker/session/audio-gaps.ts).
        metrics.audioGap(m.seconds);
        return;
      case "finished":
        this.finished = m;
        return;
      case "pong":
        return;
      case "response":
        this.pending.get(m.id)?.(m);
        this.pending.delete(m.id);
        return;
    }
  }

  private onExit(exit: { code: number | null; signal: NodeJS.Signals | null }): void {
    if (!this.finished && !this.initFailed) this.log.warn(exit, "worker exited without finishing; taking the crash path");
    this.end();
  }

  private end(): void {
    if (this.ending) return;
    this.ending = true;
    this.resolveWorkerGone();
    if (this.stopTimer) clearTimeout(this.stopTimer);
    for (const [id, answer] of this.pending) answer({ type: "response", id, ok: false, error: { status: 409, message: "The session ended." } });
    this.pending.clear();
    this.enqueue(async () => {
      // ffmpeg, Chromium and PulseAudio of a killed worker keep running: stop them before the
      // recording is repaired, so the file does not grow past the moment of the crash.
      // sessionDir is a prefix of workDir (`<id>` / `<id>.work`): one sweep finds both.
      await killSessionProcesses(this.paths.sessionDir);
      const f = this.finished;
      // A full disk: free the reserve first, so the journal and the webhooks find room.
      if (f?.errorCode === "disk_full") await this.deps.diskReserve?.release();
      const recordingPath = this.row.record ? (f?.recordingPath ?? this.paths.recording) : null;
      await finalizeSession(this.deps, {
        sessionId: this.id,
        reference: this.row.reference,
        format: this.format,
        status: this.endStatus(),
        previous: this.status,
        endReason: f ? f.endReason : this.initFailed ? "error" : "interrupted",
        errorMessage: f ? f.errorMessage : this.initFailed,
        errorCode: f ? (f.errorCode ?? null) : this.initFailed ? this.initFailedCode : null,
        evidenceDir: evidenceDirOf(this.settings.recordingsDir, this.id),
        automaticLeave: automaticLeaveOf(this.row),
        recordingPath,
        needsRepair: !f,
        startedAt: this.recordingStartedAt ?? this.row.createdAt,
        journalPath: this.paths.journal,
        timelinePath: this.paths.timeline,
        cleanup: [this.paths.sessionDir, this.paths.workDir],
        endedAt: f ? new Date(f.at) : undefined,
      }).catch((err: unknown) => this.log.error({ err }, "session end could not be completed; the next start recovers it"));
    });
    void this.chain.then(() => this.resolveDone());
  }
}
