/**
 * The disk gate in cluster mode (issue #15 with #19). A single instance answers a `/join` its
 * RECORDINGS_DIR cannot hold with 507; in a cluster the join is written on one instance and runs
 * on another, so each instance judges its own disk with the same check (checkNewSession: a
 * recorded session of the configured format beside its running ones and MIN_FREE_DISK_MB),
 * publishes the verdict with its heartbeat (`ClusterInstance.diskRoom`, read by admission) and
 * takes no placement job while it has no room.
 */
import type { Logger } from "../../shared/log/logger.ts";
import type { RecordingFormat } from "../../shared/journal/records.ts";
import { checkNewSession, type DiskCheck, type RunningRecording } from "../bot/disk/space.ts";

export interface DiskRoom {
  /** The last verdict (true until the first check). */
  readonly room: boolean;
  /** Checks RECORDINGS_DIR now beside `running`; a disk that cannot be read has no room. */
  check(running: readonly RunningRecording[]): Promise<boolean>;
}

export function createDiskRoom(c: DiskCheck & { format: RecordingFormat }, logger: Logger): DiskRoom {
  let room = true;
  return {
    get room() {
      return room;
    },
    async check(running) {
      let detail: string;
      let now: boolean;
      try {
        const verdict = await checkNewSession(c, { format: c.format, record: true }, running);
        now = verdict.ok;
        detail = verdict.detail;
      } catch (err) {
        now = false;
        detail = `RECORDINGS_DIR cannot be checked: ${err instanceof Error ? err.message : String(err)}`;
      }
      // Logged when it changes, not every heartbeat.
      if (room && !now) logger.warn({ detail }, "low disk: this instance takes no new sessions until RECORDINGS_DIR has room");
      if (!room && now) logger.info("RECORDINGS_DIR has room again: this instance takes new sessions");
      room = now;
      return now;
    },
  };
}
