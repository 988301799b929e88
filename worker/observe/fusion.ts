/**
 * Who speaks in one sample, from the independent signals (issue #17, teams-dom.md "Speakers and
 * participants"), in order of trust:
 *   1. the CSRCs of the mixed stream, mapped to people by their audio sourceId. Once the stream
 *      has carried any CSRC it is the authority: a source nobody is known for stays unattributed
 *      (`participant_id` null) rather than going to a guess;
 *   2. without CSRCs, the tiles' speaking markers (they trail the audio by up to ~1 s, so they
 *      never extend a CSRC turn);
 *   3. without either (and, on a page whose tiles show speaking markers, only after none has been
 *      lit for TILE_QUIET_MS: a marker trails the voice, and the sound between two turns is theirs),
 *      sound in the mix (the stream's own audio level, or the receiver's measure of
 *      what it played) is given to the dominant speaker of the `main-channel` history when that one
 *      is known and present, else to the author of the live caption that changed last (captions
 *      trail the voice, so a turn may start under the previous author for a moment), else kept
 *      unattributed (`participant_id` null): speech is never dropped for want of a name.
 */
import type { PageSample } from "./page-script.ts";
import type { Participant, ParticipantRegistry } from "./participants.ts";
import type { Heard } from "./speech.ts";

/** audioLevel (0..1, linear) above this is sound in the mix: about -34 dBov, well above silence. */
const LEVEL_SPEECH = 0.02;
/** On a page with tile markers, sound with none lit is someone without a tile only after this long. */
const TILE_QUIET_MS = 1_500;
/** A caption author counts for sound in the mix this long after their caption last changed. */
const CAPTION_HOLD_MS = 3_000;

export class SpeechFusion {
  #csrcSeen = false;
  #dominant: { source: number; t: number } | null = null;
  /** Authors whose caption changed in the latest sample that had any, and when. */
  #captioned: { names: string[]; t: number } | null = null;
  /** When a tile last showed someone speaking (null: this page never has). */
  #tileLitAt: number | null = null;


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
    if (sample.captions && sample.captions.length > 0) this.#captioned = { names: sample.captions, t: sample.t };
    if (sample.tiles.length > 0) this.#tileLitAt = sample.t;
    if (active.size > 0 || sample.level === null || sample.level < LEVEL_SPEECH) return active;
    if (this.#tileLitAt !== null && sample.t - this.#tileLitAt < TILE_QUIET_MS) return active;
    // Teams sends the history when the dominant speaker changes, so its age says nothing.
    const dominant = this.#dominant ? this.registry.bySource(this.#dominant.source) : undefined;
    const at = Math.min(sample.t, sample.levelAt ?? sample.t);
    if (dominant && dominant.present && !dominant.self) active.set(dominant.id, { participantId: dominant.id, at });
    else for (const p of this.#captionAuthors(sample.t)) active.set(p.id, { participantId: p.id, at });
    if (active.size === 0) active.set("unattributed", { participantId: null, at });
    return active;
  }

  #captionAuthors(t: number): Participant[] {
    const c = this.#captioned;
    if (!c || t - c.t > CAPTION_HOLD_MS) return [];
    return c.names.map((name) => this.registry.byShownName(name)).filter((p): p is Participant => !!p && p.present && !p.self);
  }
}
