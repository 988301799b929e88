/**
 * Who speaks in one sample, from the independent signals (issue #17, teams-dom.md "Speakers and
 * participants"), in order of trust:
 *   1. the CSRCs of the mixed stream, mapped to people by their audio sourceId. Once the stream
 *      has carried any CSRC it is the authority: a source nobody is known for stays unattributed
 *      (`participant_id` null) rather than going to a guess;
 *   2. without CSRCs, the tiles' speaking markers (they trail the audio by up to ~1 s, so they
 *      never extend a CSRC turn);
 *   3. without either, sound in the mix (the stream's own audio level) is given to the dominant
 *      speaker of the `main-channel` history when that one is known and present, else kept unattributed.
 */
import type { PageSample } from "./page-script.ts";
import type { ParticipantRegistry } from "./participants.ts";
import type { Heard } from "./speech.ts";

/** audioLevel (0..1, linear) above this is sound in the mix: about -34 dBov, well above silence. */
const LEVEL_SPEECH = 0.02;

export class SpeechFusion {
  #csrcSeen = false;
  #dominant: { source: number; t: number } | null = null;


  constructor(private readonly registry: ParticipantRegistry) {}

  dominant(t: number, history: readonly number[]): void {
    const source = history[0];
    if (source !== undefined) this.#dominant = { source, t };
  }

  /** The keys speaking in this sample (participant id or `source:<csrc>`): their participant and when last heard. */
  speakers(sample: PageSample): Map<string, Heard> {
    const active = new Map<string, Heard>();
    if (sample.csrc.length > 0) this.#csrcSeen = true;
    if (this.#csrcSeen) {
      for (const source of sample.csrc) {
        const p = this.registry.bySource(source);
        const at = sample.heard?.[String(source)] ?? sample.t;
        const key = p ? p.id : `source:${source}`;
        active.set(key, { participantId: p?.id ?? null, at: Math.max(at, active.get(key)?.at ?? 0) });
      }
      return active;
    }
    for (const tile of sample.tiles) {
      const p = this.registry.byShownName(tile.name) ?? this.registry.byShownName(tile.aria) ?? this.registry.byShownName(tile.tid);
      if (p && !p.self) active.set(p.id, { participantId: p.id, at: sample.t });
    }
    if (active.size > 0 || sample.level === null || sample.level < LEVEL_SPEECH) return active;
    // Teams sends the history when the dominant speaker changes, so its age says nothing.
    const dominant = this.#dominant ? this.registry.bySource(this.#dominant.source) : undefined;
    if (dominant && dominant.present && !dominant.self) active.set(dominant.id, { participantId: dominant.id, at: sample.t });
    else active.set("unattributed", { participantId: null, at: sample.t });
    return active;
  }
}
