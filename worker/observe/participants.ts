/**
 * Who is in the call, merged from every signal (teams-dom.md "Speakers and participants"): the
 * roster on the signalling WebSocket (and its HTTP snapshot), the page's call object, the People
 * pane and the video tiles. Each person gets a stable id (`p1`, `p2`, … in order of first sight)
 * however many signals name them: an MRI ties the roster to the call object, a name ties either
 * to the DOM. Presence is decided per signal: someone has left when no signal still shows them
 * and at least one says they are gone (a closed People pane or a tile paged away says nothing).
 */
import { isEmailShaped, parseRowLabel, splitDecorations } from "./names.ts";
import type { RosterEntry } from "./roster-frames.ts";

export type PresenceSignal = "roster" | "call" | "people" | "tiles";

/** Which signal's name wins when two disagree: the data ones over what the DOM renders. */
const NAME_RANK: Record<PresenceSignal, number> = { roster: 4, call: 3, people: 2, tiles: 1 };

/**
 * Seen this soon after admission, a person counts as already there (`joined_at` null): the
 * roster snapshot, the call object and the People pane all arrive within the first seconds.
 */
export const PRESENT_AT_ADMISSION_MS = 3_000;

export interface Participant {
  readonly id: string;
  mri: string | null;
  name: string;
  label: string | null;
  self: boolean;
  joinedAt: number | null;
  leftAt: number | null;
  present: boolean;
}

interface Entry extends Participant {
  nameRank: number;
  names: Set<string>;
  decorations: Set<string>;
  sources: Set<number>;
  claims: Map<PresenceSignal, boolean>;
  seen: boolean;
}

export type ParticipantChange = "joined" | "left" | "updated";

export interface RegistryOptions {
  /** The bot's own display name: the self entry when no MRI tells. */
  selfName: string;
  admittedAt: number;
  onChange(participant: Participant, change: ParticipantChange, at: number): void;
}

export class ParticipantRegistry {
  #next = 1;
  readonly #entries: Entry[] = [];
  #callerMri: string | null = null;
  /** What the People pane and the tiles showed at the last pass (a row new since then is a newcomer's). */
  #shown: { people: Set<string>; tiles: Set<string> } = { people: new Set(), tiles: new Set() };

  constructor(private readonly options: RegistryOptions) {}

  list(): readonly Participant[] {
    return this.#entries;
  }

  /** The participant whose audio sourceId is `source` (a CSRC of the mix). */
  bySource(source: number): Participant | undefined {
    return this.#entries.find((e) => e.sources.has(source));
  }

  /** A tile's name, its aria-label or its data-tid (never an email) → the participant shown. */
  byShownName(shown: string | null): Participant | undefined {
    if (!shown || isEmailShaped(shown)) return undefined;
    const { name } = splitDecorations(shown);
    return this.#entries.find((e) => e.names.has(name) || e.names.has(shown));
  }

  roster(entries: readonly RosterEntry[], at: number): void {
    for (const r of entries) {
      const split = r.displayName !== null ? splitDecorations(r.displayName) : null;
      const entry = this.#byMri(r.mri) ?? (split ? this.#unlinkedByName(split.name) : undefined) ?? this.#create();
      entry.mri ??= r.mri;
      if (split) this.#name(entry, split.name, split.decorations, "roster");
      for (const s of r.sources) entry.sources.add(s);
      if (r.active !== null) entry.claims.set("roster", r.active);
      else if (!entry.claims.has("roster")) entry.claims.set("roster", true);
      this.#settle(entry, at);
    }
  }

  call(snapshot: { callerMri: string | null; participants: { id: string; displayName: string | null; sources: number[] }[] }, at: number): void {
    if (snapshot.callerMri) this.#callerMri = snapshot.callerMri;
    const listed = new Set<Entry>();
    for (const p of snapshot.participants) {
      if (!p.id && !p.displayName) continue;
      const split = p.displayName !== null ? splitDecorations(p.displayName) : null;
      const entry = (p.id ? this.#byMri(p.id) : undefined) ?? (split ? this.#unlinkedByName(split.name) : undefined) ?? this.#create();
      if (p.id) entry.mri ??= p.id;
      if (split) this.#name(entry, split.name, split.decorations, "call");
      for (const s of p.sources) entry.sources.add(s);
      entry.claims.set("call", true);
      listed.add(entry);
    }
    for (const e of this.#entries) if (!listed.has(e) && e.claims.has("call")) e.claims.set("call", false);
    for (const e of this.#entries) this.#settle(e, at);
  }

  /** People-pane rows; null when the pane is closed (no claim either way). */
  people(rows: readonly string[] | null, at: number): void {
    if (rows === null) {
      for (const e of this.#entries) e.claims.delete("people");
      return;
    }
    const listed = new Set<Entry>();
    const before = this.#shown.people;
    this.#shown.people = new Set(rows);
    for (const row of rows) {
      const parsed = parseRowLabel(row, this.#entries.flatMap((e) => [...e.names]));
      if (!parsed.name || isEmailShaped(parsed.name)) continue;
      const entry = this.#forShown(parsed.name, parsed.decorations, "people", before.has(row), listed) ?? this.#create();
      this.#name(entry, parsed.name, parsed.decorations, "people");
      entry.claims.set("people", true);
      listed.add(entry);
    }
    for (const e of this.#entries) if (!listed.has(e) && e.claims.has("people")) e.claims.set("people", false);
    for (const e of this.#entries) this.#settle(e, at);
  }

  tiles(tiles: readonly { name: string | null; tid: string | null; aria: string | null }[], at: number): void {
    const listed = new Set<Entry>();
    const before = this.#shown.tiles;
    const keyOf = (t: { name: string | null; tid: string | null; aria: string | null }) => `${t.name}\n${t.tid}\n${t.aria}`;
    this.#shown.tiles = new Set(tiles.map(keyOf));
    for (const t of tiles) {
      const shown = [t.name, t.tid, t.aria].find((s): s is string => !!s && !isEmailShaped(s));
      if (!shown) continue;
      const { name, decorations } = t.name ? splitDecorations(t.name) : splitDecorations(shown);
      const fromAria = t.aria ? splitDecorations(t.aria).decorations : [];
      const all = [...new Set([...decorations, ...fromAria])];
      const entry = this.#forShown(name, all, "tiles", before.has(keyOf(t)), listed) ?? this.#create();
      this.#name(entry, name, all, "tiles");
      entry.claims.set("tiles", true);
      listed.add(entry);
    }
    for (const e of this.#entries) if (!listed.has(e) && e.claims.has("tiles")) e.claims.set("tiles", false);
    for (const e of this.#entries) this.#settle(e, at);
  }

  #create(): Entry {
    const entry: Entry = {
      id: `p${this.#next++}`,
      mri: null,
      name: "",
      label: null,
      self: false,
      joinedAt: null,
      leftAt: null,
      present: false,
      nameRank: -1,
      names: new Set(),
      decorations: new Set(),
      sources: new Set(),
      claims: new Map(),
      seen: false,
    };
    this.#entries.push(entry);
    return entry;
  }

  /**
   * The entry a People row or tile of `name` stands for, none already `taken` by another row of
   * this pass: two people of one name are two rows, each for one of them (audit: two "Alex Smith"s
   * both claimed by the first kept the one who left present and gave her the other's label).
   * Among several: the one whose decorations the row shows; one the roster or call object says is
   * here over one they say has gone; a row already shown last time for an entry it already stood
   * for, a new row for an entry it did not; then the first seen.
   */
  #forShown(name: string, decorations: readonly string[], signal: "people" | "tiles", seenBefore: boolean, taken: ReadonlySet<Entry>): Entry | undefined {
    const candidates = this.#entries.filter((e) => e.names.has(name) && !taken.has(e));
    if (candidates.length <= 1) return candidates[0];
    const shows = new Set(decorations);
    const score = (e: Entry): number => {
      let n = 0;
      const same = e.decorations.size === shows.size && [...e.decorations].every((d) => shows.has(d));
      // Equal decorations say little for an entry none has been given yet.
      if (same && (e.decorations.size > 0 || e.claims.has(signal))) n += 4;
      const data = (["roster", "call"] as const).map((k) => e.claims.get(k)).filter((c) => c !== undefined);
      if (data.some(Boolean)) n += 2;
      else if (data.length > 0) n -= 2;
      if (seenBefore === (e.claims.get(signal) === true)) n += 1;
      return n;
    };
    return candidates.reduce((best, e) => (score(e) > score(best) ? e : best));
  }

  #byMri(mri: string): Entry | undefined {
    return this.#entries.find((e) => e.mri === mri);
  }

  /** A DOM-only entry (no MRI yet) of that name, which a roster or call-object entry takes over. */
  #unlinkedByName(name: string): Entry | undefined {
    return this.#entries.find((e) => e.mri === null && e.names.has(name));
  }

  #name(entry: Entry, name: string, decorations: readonly string[], signal: PresenceSignal): void {
    if (!name) return;
    entry.names.add(name);
    let changed = false;
    if (NAME_RANK[signal] >= entry.nameRank && entry.name !== name) {
      entry.name = name;
      changed = true;
    }
    entry.nameRank = Math.max(entry.nameRank, NAME_RANK[signal]);
    for (const d of decorations) {
      if (!entry.decorations.has(d)) {
        entry.decorations.add(d);
        changed = true;
      }
    }
    entry.label = entry.decorations.size > 0 ? [...entry.decorations].join(", ") : null;
    if (changed && entry.present) this.options.onChange(entry, "updated", Date.now());
  }

  /** Applies the claims: joined, left, or nothing new. */
  #settle(entry: Entry, at: number): void {
    if (!entry.name) return;
    const self = this.#isSelf(entry);
    if (self !== entry.self) {
      entry.self = self;
      if (entry.present) this.options.onChange(entry, "updated", at);
    }
    const claims = [...entry.claims.values()];
    const present = claims.some(Boolean);
    const gone = !present && claims.length > 0;
    if (present && !entry.present) {
      if (!entry.seen) entry.joinedAt = entry.self || at < this.options.admittedAt + PRESENT_AT_ADMISSION_MS ? null : at;
      entry.seen = true;
      entry.present = true;
      entry.leftAt = null;
      this.options.onChange(entry, "joined", at);
    } else if (gone && entry.present) {
      entry.present = false;
      entry.leftAt = at;
      this.options.onChange(entry, "left", at);
    }
  }

  #isSelf(entry: Entry): boolean {
    if (this.#callerMri !== null && entry.mri !== null) return entry.mri === this.#callerMri;
    if (!entry.names.has(this.options.selfName)) return false;
    // By name only when nobody else already is the bot.
    return !this.#entries.some((e) => e !== entry && e.self);
  }
}
