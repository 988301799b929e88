import type { ClockRecord, ParticipantRecord, Timeline, TimelineRecord, TimelineSpeech } from "./records.ts";

export interface BuildOptions {
  sessionId: string;
  reference: string | null;
  recordingFile: string | null;
  records: readonly TimelineRecord[];
  /**
   * `live`: the session runs (open turns end now, the planned origin holds); `final`: it has
   * ended, cleanly (the worker wrote the final clock) or not (the file was never trimmed, so its
   * first sample is the moment ffmpeg opened).
   */
  mode: "live" | "final";
  /** Epoch ms: now for a live view; the session's end for a final one when known. */
  now: number;
  /**
   * The worker closed (and trimmed) the file itself, but died before writing the final clock: the
   * planned origin holds. False or absent: a file repaired after a crash keeps its head.
   */
  trimmed?: boolean;
}

/** Seconds, two decimals (issue #17: offsets a player can seek with). */
const seconds = (ms: number): number => Math.round(Math.max(0, ms) / 10) / 100;

/** Which instant is offset 0: see BuildOptions.mode. */
export function originOf(clock: ClockRecord, mode: "live" | "final", trimmed = false): number {
  if (clock.final || mode === "live" || trimmed) return clock.origin;
  return clock.opened_at ?? clock.admitted_at;
}

interface Turn {
  key: string;
  participantId: string | null;
  start: number;
  end: number;
}

/**
 * The timeline from the observer's records. Pure: the same records give the same file, so the
 * live route, the stored file and a recovered session agree.
 */
export function buildTimeline(options: BuildOptions): Timeline {
  const { records, mode } = options;
  let clock: ClockRecord | null = null;
  let lastAt = 0;
  const participants = new Map<string, ParticipantRecord>();
  const open = new Map<string, { participantId: string | null; start: number }>();
  const turns: Turn[] = [];
  for (const r of records) {
    switch (r.type) {
      case "clock":
        clock = r;
        lastAt = Math.max(lastAt, r.admitted_at);
        break;
      case "participant":
        participants.set(r.id, r);
        break;
      case "speech_start":
        lastAt = Math.max(lastAt, r.at);
        if (!open.has(r.key)) open.set(r.key, { participantId: r.participant_id, start: r.at });
        break;
      case "speech_end": {
        lastAt = Math.max(lastAt, r.at);
        const started = open.get(r.key);
        if (started) {
          open.delete(r.key);
          if (r.at > started.start) turns.push({ key: r.key, participantId: started.participantId, start: started.start, end: r.at });
        }
        break;
      }
      case "alive":
        lastAt = Math.max(lastAt, r.at);
        break;
    }
  }
  const base = { session_id: options.sessionId, reference: options.reference, recording_file: options.recordingFile };
  if (!clock) return { ...base, started_at: null, ended_at: null, participants: [], speech: [] };

  const origin = originOf(clock, mode, options.trimmed);
  // A crash leaves turns open: they end where the observer was last known alive.
  const end = mode === "live" ? options.now : lastAt || options.now;
  for (const [key, started] of open) {
    if (end > started.start) turns.push({ key, participantId: started.participantId, start: started.start, end });
  }
  turns.sort((a, b) => a.start - b.start || a.end - b.end);
  return {
    ...base,
    started_at: new Date(origin).toISOString(),
    ended_at: mode === "final" ? new Date(Math.max(end, origin)).toISOString() : null,
    participants: [...participants.values()].map((p) => ({
      id: p.id,
      name: p.name,
      label: p.label,
      self: p.self,
      joined_at: p.joined_at === null ? null : seconds(p.joined_at - origin),
      left_at: p.left_at === null ? null : seconds(p.left_at - origin),
    })),
    speech: markOverlaps(turns).map((t) => ({
      participant_id: t.participantId,
      start: seconds(t.start - origin),
      end: seconds(t.end - origin),
      overlap: t.overlap,
    })),
  };
}

/** Two turns of different speakers that share any time both get `overlap: true`. */
function markOverlaps(turns: Turn[]): (Turn & { overlap: boolean })[] {
  const marked = turns.map((t) => ({ ...t, overlap: false }));
  for (let i = 0; i < marked.length; i++) {
    const a = marked[i]!;
    for (let j = i + 1; j < marked.length && marked[j]!.start < a.end; j++) {
      const b = marked[j]!;
      if (b.key !== a.key && b.end > a.start) {
        a.overlap = true;
        b.overlap = true;
      }
    }
  }
  return marked;
}

export type { TimelineSpeech };
