/**
 * Turns from samples (issue #17): a speaker's samples become one turn until they have been silent
 * for DEBOUNCE_MS; a shorter gap (a breath, a lost packet) does not split it.
 */

/** The page samples this often (page-script.ts). */
export const SAMPLE_MS = 100;
/** Issue #17: "a gap under 300 ms does not split a turn". */
export const DEBOUNCE_MS = 300;
/**
 * A turn's first frame was played at most one sample before it was first seen (half a sample on
 * average); its last frame lasts one frame (20 ms in Teams' audio) after it was played.
 */
const START_EDGE_MS = SAMPLE_MS / 2;
const FRAME_MS = 20;

/** A key speaking in one sample: whose it is and when it was last heard (epoch ms). */
export interface Heard {
  participantId: string | null;
  at: number;
}

export interface TurnSink {
  start(key: string, participantId: string | null, at: number): void;
  end(key: string, at: number): void;
}

export class TurnTracker {
  readonly #open = new Map<string, { participantId: string | null; last: number; seen: number }>();

  constructor(private readonly sink: TurnSink) {}

  /** One sample taken at `t`: the keys speaking (participant id, or a source nobody is known for). */
  update(t: number, active: ReadonlyMap<string, Heard>): void {
    for (const [key, heard] of active) {
      const open = this.#open.get(key);
      if (open) {
        open.last = Math.max(open.last, heard.at);
        open.seen = t;
      } else {
        this.#open.set(key, { participantId: heard.participantId, last: heard.at, seen: t });
        this.sink.start(key, heard.participantId, heard.at - START_EDGE_MS);
      }
    }
    for (const [key, open] of this.#open) {
      if (!active.has(key) && t - open.seen >= DEBOUNCE_MS) {
        this.#open.delete(key);
        this.sink.end(key, open.last + FRAME_MS);
      }
    }
  }

  /**
   * After the samples up to `now`: every turn edge before the instant returned has been passed to
   * the sink. A turn not yet seen starts at its first sample less START_EDGE_MS (a sample comes
   * every SAMPLE_MS); an open one ends after where it was last heard.
   */
  settledThrough(now: number): number {
    let through = now - SAMPLE_MS - START_EDGE_MS;
    for (const open of this.#open.values()) through = Math.min(through, open.last + FRAME_MS);
    return through;
  }

  /** Ends every open turn where it was last heard (the call is over, or the observer stops). */
  closeAll(): void {
    for (const [key, open] of this.#open) this.sink.end(key, open.last + FRAME_MS);
    this.#open.clear();
  }
}
