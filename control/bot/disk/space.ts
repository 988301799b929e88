/**
 * Free space of RECORDINGS_DIR against what sessions may need (issue #15): the `/join` gate
 * (507 when the new session's worst case, what running sessions may still write and
 * MIN_FREE_DISK_MB do not fit) and the `/readyz` check (`diskProblem`, self-contained so the
 * readiness split of the recorder's dependencies can take it as it is).
 */
import { statfs, stat } from "node:fs/promises";
import type { RecordingFormat } from "../../../shared/journal/records.ts";
import { sessionNeedBytes, type SessionLimits } from "./budget.ts";

const MIB = 1024 * 1024;

/** Bytes an unprivileged writer can still use on the filesystem holding `dir` (or its nearest existing parent). */
export async function freeBytes(dir: string): Promise<number> {
  const s = await statfs(dir);
  return Number(s.bavail) * Number(s.bsize);
}

export interface RunningRecording {
  record: boolean;
  format: RecordingFormat;
  /** The file being written (its size is what the session has used so far). */
  path: string;
}

async function sizeOf(path: string): Promise<number> {
  return stat(path).then(
    (s) => s.size,
    () => 0,
  );
}

export interface DiskCheck {
  recordingsDir: string;
  minFreeMb: number;
  limits: Omit<SessionLimits, "format">;
}

export interface DiskVerdict {
  ok: boolean;
  freeBytes: number;
  neededBytes: number;
  detail: string;
}

/** Whether a new session of `format` fits beside the running ones. */
export async function checkNewSession(c: DiskCheck, session: { format: RecordingFormat; record: boolean }, running: readonly RunningRecording[]): Promise<DiskVerdict> {
  const free = await freeBytes(c.recordingsDir);
  let needed = c.minFreeMb * MIB + sessionNeedBytes({ ...c.limits, format: session.format }, session.record);
  for (const r of running) needed += sessionNeedBytes({ ...c.limits, format: r.format }, r.record, r.record ? await sizeOf(r.path) : 0);
  const mb = (n: number) => Math.ceil(n / MIB);
  return {
    ok: free >= needed,
    freeBytes: free,
    neededBytes: needed,
    detail:
      `Not enough free disk space in RECORDINGS_DIR for another session: ${mb(free)} MB free, ${mb(needed)} MB needed ` +
      `(this session's worst case, ${running.length} running session(s) and MIN_FREE_DISK_MB ${c.minFreeMb}). Free space or lower MAX_RECORDING_MINUTES.`,
  };
}

/**
 * The `/readyz` disk check: null when one more session fits with nothing running, else what is
 * wrong. A disk that cannot be read is a problem too.
 */
export async function diskProblem(c: DiskCheck & { format: RecordingFormat }): Promise<string | null> {
  try {
    const verdict = await checkNewSession(c, { format: c.format, record: true }, []);
    return verdict.ok ? null : `low disk: ${Math.floor(verdict.freeBytes / MIB)} MB free in RECORDINGS_DIR, ${Math.ceil(verdict.neededBytes / MIB)} MB needed for one session (MIN_FREE_DISK_MB ${c.minFreeMb})`;
  } catch (err) {
    return `RECORDINGS_DIR cannot be checked: ${err instanceof Error ? err.message : String(err)}`;
  }
}
