/**
 * Crash recovery at startup (recorder-bot.md: "Sessions survive a crash or restart"). For every
 * journal without a `finished` record: kill what the old run left (workers, Chromium, ffmpeg,
 * PulseAudio), then finish the session (rebuilding the row from the journal when the database
 * lacks it) and send its `finished` webhook. A session that had already ended (a final status in
 * the journal: the worker finished, the upload was still pending) keeps that status and resumes
 * its upload; one that was still running is the crash path: repair, store, `interrupted`. Rows
 * left running without a journal become `interrupted` too. A damaged journal never stops the start.
 *
 * In cluster mode (#19, `instanceId` set) a start touches only its own sessions: rows of other
 * instances are theirs (or the takeover's) to end, a journal whose row names another instance is
 * left alone, and a session another instance already marked `interrupted` (`instance_lost`) keeps
 * that end: its recording is repaired and stored and its one `finished` webhook sent, with no
 * second `status_changed`.
 */
import { join } from "node:path";
import { TIMELINE_JOURNAL_NAME } from "../../shared/timeline/index.ts";
import { listJournals, readJournal, summarizeJournal, type JournalSummary } from "../../shared/journal/index.ts";
import { FINAL_STATUSES } from "../../shared/ipc/messages.ts";
import type { SessionStatus } from "../../shared/journal/records.ts";
import { errorCodeSchema } from "../../shared/recording/error-codes.ts";
import { evidenceDirOf, journalDirOf } from "./paths.ts";
import { automaticLeaveOf } from "./session-view.ts";
import type { SessionRepo } from "./session-repo.ts";
import { finalizeSession, type FinalizeDeps } from "./supervisor/finalize.ts";
import { killSessionProcesses } from "./supervisor/orphans.ts";
import { lastAlive } from "./last-alive.ts";

/** Session ids are UUIDs (recorder-bot.md Session); journals are named `<session_id>.journal`. */
const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface RecoveryResult {
  /** Sessions whose storage and webhook are still under way (remote store slow or down). */
  background: Promise<void>;
  recovered: string[];
}

export async function recoverSessions(deps: FinalizeDeps & { repo: SessionRepo; recordingsDir: string; instanceId?: string }): Promise<RecoveryResult> {
  const log = deps.logger.child({ component: "recovery" });
  const journalDir = journalDirOf(deps.recordingsDir);
  const recovered: string[] = [];
  const work: Promise<void>[] = [];
  const seen = new Set<string>();
  for (const entry of await listJournals(journalDir).catch((err: unknown) => (log.error({ err }, "journal folder unreadable"), []))) {
    let summary: JournalSummary;
    try {
      const contents = await readJournal(entry.path);
      if (contents.damaged) log.warn({ session_id: entry.sessionId, damage: contents.damage }, "journal has a damaged tail; using the records before it");
      summary = summarizeJournal(contents.records);
    } catch (err) {
      log.error({ err, path: entry.path }, "journal unreadable; skipped");
      continue;
    }
    const session = summary.session;
    if (!session) {
      log.warn({ path: entry.path }, "journal without a session record; skipped");
      continue;
    }
    // The id names folders the recovery kills processes from and deletes: a journal whose record
    // disagrees with its own file name, or names no UUID (`../x`, `.`), was not written by us and
    // must not send the cleanup outside `.sessions/<id>`.
    if (session.session_id !== entry.sessionId || !SESSION_ID.test(session.session_id)) {
      log.error({ path: entry.path, session_id: session.session_id }, "journal names a session other than its file; skipped");
      continue;
    }
    seen.add(session.session_id);
    if (summary.finished) continue;
    const owner = deps.instanceId === undefined ? null : ((await deps.repo.find(session.session_id))?.instanceId ?? null);
    if (owner !== null && owner !== deps.instanceId) {
      log.error({ path: entry.path, session_id: session.session_id, instance: owner }, "journal of a session another instance runs; skipped");
      continue;
    }
    const sessionDir = join(journalDir, session.session_id);
    const killed = await killSessionProcesses(sessionDir);
    if (killed.length > 0) log.warn({ session_id: session.session_id, pids: killed }, "killed processes left by the previous run");
    await deps.repo.createFromJournal({
      id: session.session_id,
      meetingUrl: session.meeting_url,
      reference: session.reference,
      displayName: session.display_name,
      record: session.record,
      format: session.format,
      createdAt: new Date(session.created_at),
    }, runningOrJoining(summary.lastStatus));
    const row = await deps.repo.find(session.session_id);
    const previous = (row?.status ?? summary.lastStatus ?? null) as SessionStatus | null;
    // Marked by another instance while this one was gone: that end stands (cluster mode).
    const lost = row?.endReason === "instance_lost";
    // The session had ended before the restart: only its storage (or webhook) was left to do.
    const ended = summary.lastStatus !== null && FINAL_STATUSES.has(summary.lastStatus);
    recovered.push(session.session_id);
    if (ended) log.info({ session_id: session.session_id, status: summary.lastStatus, upload_pending: summary.uploadPending }, "resuming the end of a finished session");
    else log.info({ session_id: session.session_id, last_status: previous }, "recovering an interrupted session");
    work.push(
      finalizeSession(deps, {
        sessionId: session.session_id,
        reference: session.reference,
        format: session.format,
        // An end the takeover already announced stands, even when the orphaned worker managed to
        // journal an end of its own (it saw its control plane die) before it was killed.
        status: !lost && ended && summary.lastStatus ? summary.lastStatus : "interrupted",
        previous,
        endReason: lost ? "instance_lost" : ended ? (summary.endReason ?? "interrupted") : "interrupted",
        errorMessage: ended && !lost ? summary.errorMessage : null,
        errorCode: ended && !lost ? (errorCodeSchema.safeParse(summary.errorCode).data ?? null) : null,
        evidenceDir: evidenceDirOf(deps.recordingsDir, session.session_id),
        automaticLeave: row ? automaticLeaveOf(row) : null,
        recordingPath: session.record ? summary.recordingPath : null,
        needsRepair: !summary.recordingClosed,
        startedAt: row?.joinedAt ?? new Date(session.created_at),
        storedLocation: summary.storedLocation,
        pendingFileName: summary.uploadPending,
        journalPath: entry.path,
        timelinePath: join(sessionDir, TIMELINE_JOURNAL_NAME),
        cleanup: [sessionDir, `${sessionDir}.work`],
        // Not the restart's time: an end announced by the takeover stands; one journalled before
        // the crash happened then; otherwise the session ran until it was last seen alive.
        endedAt: lost
          ? (row?.endedAt ?? undefined)
          : ended && summary.lastStatusAt
            ? new Date(summary.lastStatusAt)
            : await lastAlive([entry.path, join(sessionDir, TIMELINE_JOURNAL_NAME), session.record ? summary.recordingPath : null], summary.lastRecordAt, deps.now()),
      }).catch((err: unknown) => log.error({ err, session_id: session.session_id }, "recovery of a session failed; retried at the next start")),
    );
  }
  // Rows a crashed run left "running" with no journal to recover from: nothing to store.
  for (const row of await deps.repo.listRunning()) {
    if (seen.has(row.id)) continue;
    // Cluster mode: another instance's running session is never this start's to end.
    if (deps.instanceId !== undefined && row.instanceId !== deps.instanceId) continue;
    recovered.push(row.id);
    log.warn({ session_id: row.id }, "session left running without a journal; marking it interrupted");
    work.push(
      (async () => {
        const endedAt = deps.now();
        await deps.repo.finish(row.id, { status: "interrupted", endReason: "interrupted", errorMessage: null, recordingFile: null, recordingBytes: row.recordingBytes, endedAt });
        // Like every other end: with WEBHOOK_EVENTS the change into the final status is sent first.
        await deps.notifier.statusChanged({ sessionId: row.id, reference: row.reference, status: "interrupted", previous: row.status as SessionStatus, at: endedAt, endReason: "interrupted", recordingFile: null, errorMessage: null });
        await deps.notifier.finished({ sessionId: row.id, reference: row.reference, status: "interrupted", previous: row.status as SessionStatus, endReason: "interrupted", recordingFile: null, errorMessage: null, at: endedAt });
      })().catch((err: unknown) => log.error({ err, session_id: row.id }, "could not mark a session interrupted")),
    );
  }
  return { recovered, background: Promise.all(work).then(() => undefined) };
}

/** A rebuilt row starts in the last running status the journal knew, so the end is a transition. */
function runningOrJoining(status: SessionStatus | null): SessionStatus {
  return status === "lobby" || status === "recording" || status === "connected" ? status : "joining";
}
