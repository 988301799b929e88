/**
 * The meeting observer (issue #17): follows who is in the call and who speaks, for the whole
 * session, from the page's signals; journals what it learns as it goes (shared/timeline) so the
 * timeline survives a crash; and emits the same facts in-process (`participant`, `speech`) for
 * whatever else in the worker wants them (the live audio out of issue #18).
 */
import { EventEmitter } from "node:events";
import type { CDPSession, Page, Response, WebSocket as PwWebSocket } from "playwright-core";
import type { Logger } from "../../shared/log/logger.ts";
import { openTimelineJournal, type TimelineJournal } from "../../shared/timeline/index.ts";
import { SpeechFusion } from "./fusion.ts";
import { OBSERVER_GLOBAL, PAGE_SCRIPT, type PageDrain } from "./page-script.ts";
import { ParticipantRegistry, type Participant, type ParticipantChange } from "./participants.ts";
import { rosterFromBody, rosterFromFrame, type RosterEntry } from "./roster-frames.ts";
import { TurnTracker } from "./speech.ts";

/**
 * How often the page's samples are fetched (they are taken every 100 ms in the page, stamped
 * there, so the timeline's precision does not depend on this). Each drain is a round trip
 * renderer → browser → worker and was most of the observation's cost: within-bot A/B
 * (bench/bot/observe-within.ts, 3 bots × 8 pairs) 1.85 ± 0.39 % of a core at 500 ms, 0.56 ± 0.38
 * at 1 s. What waits for it: the DOM and call-object signals of a join or leave (±1 s of the
 * issue's ±2 s) and the live listeners' events.
 */
const DRAIN_MS = 1_000;
/** While a live listener follows the events (issue #18), which wait for a drain: half the wait. */
const LIVE_DRAIN_MS = 500;
/**
 * How often the journal is fsynced (a power loss loses at most this much). Every drain writes an
 * `alive` mark, so after a process crash a turn still open ends within one drain of the truth.
 */
const SYNC_MS = 2_000;
/** The last look at the page on the way out gets this long. */
const STOP_DRAIN_MS = 2_000;
/** HTTP answers worth reading for a roster snapshot (the people there before the bot). */
const ROSTER_URL = /roster/i;
/**
 * How long after the admission HTTP answers are watched for that snapshot. Teams fetches it as
 * the bot comes in; later changes come as rosterUpdate frames on the WebSocket (always watched)
 * and show in the call object and the DOM. Watching answers costs the worker every response of
 * the page (Playwright builds request and response objects for each once anyone listens), which
 * was most of the observation's CPU in the steady state (bench/bot/observe-ab.ts).
 */
const ROSTER_SNAPSHOT_MS = 15_000;
const DRAIN_EXPRESSION = `window.${OBSERVER_GLOBAL} ? window.${OBSERVER_GLOBAL}.drain() : null`;

export interface ParticipantEvent {
  change: ParticipantChange;
  participant: { id: string; name: string; label: string | null; self: boolean };
  /** Epoch ms. */
  at: number;
  /** Joined after the bot was admitted (false: already there, or the bot itself). */
  joinedLate: boolean;
}

export interface SpeechEvent {
  kind: "start" | "end";
  /** Participant id or `source:<csrc>` / `unattributed` for speech nobody is known for. */
  key: string;
  participantId: string | null;
  /** Epoch ms. */
  at: number;
}

export interface ObserverEvents {
  participant: [ParticipantEvent];
  speech: [SpeechEvent];
  /**
   * Epoch ms before which every speech and participant event has been emitted: the turn edges
   * are found up to a debounce after the fact, so a consumer that wants the events in the order
   * they happened holds them until then. Infinity once the observer has stopped.
   */
  settled: [number];
}

export interface Clock {
  /** When ffmpeg opened its input (sample 0 of the untrimmed file), null without a recording. */
  openedAt: number | null;
  admittedAt: number;
  /** Where offset 0 will be once the file is trimmed to the admission. */
  plannedOrigin: number;
}

export class MeetingObserver extends EventEmitter<ObserverEvents> {
  #registry: ParticipantRegistry | null = null;
  #fusion: SpeechFusion | null = null;
  #tracker: TurnTracker;
  #clock: Clock | null = null;
  #pendingRoster: RosterEntry[] = [];
  #timer: NodeJS.Timeout | null = null;
  #lastSync = 0;
  #draining: Promise<void> | null = null;
  #stopped = false;
  #cdp: Promise<CDPSession> | null = null;
  #onResponse: ((response: Response) => void) | null = null;
  #live: () => boolean = () => false;

  private constructor(
    private readonly page: Page,
    private readonly journal: TimelineJournal,
    private readonly selfName: string,
    private readonly logger: Logger,
  ) {
    super();
    this.#tracker = new TurnTracker({
      start: (key, participantId, at) => {
        this.journal.append({ type: "speech_start", key, participant_id: participantId, at });
        this.emit("speech", { kind: "start", key, participantId, at });
      },
      end: (key, at) => {
        this.journal.append({ type: "speech_end", key, at });
        this.emit("speech", { kind: "end", key, participantId: key.includes(":") || key === "unattributed" ? null : key, at });
      },
    });
  }

  /**
   * Hooks the page before it loads the meeting (the init script must be in place before the
   * page's own code creates its peer connections) and starts listening to its WebSockets.
   */
  static async attach(options: { page: Page; journalPath: string; selfName: string; logger: Logger }): Promise<MeetingObserver> {
    const journal = await openTimelineJournal(options.journalPath);
    const observer = new MeetingObserver(options.page, journal, options.selfName, options.logger.child({ component: "observe" }));
    await options.page.context().addInitScript(PAGE_SCRIPT);
    options.page.on("websocket", (ws) => observer.#watchSocket(ws));
    observer.#onResponse = (response) => {
      if (!ROSTER_URL.test(response.url()) || !/json/i.test(response.headers()["content-type"] ?? "")) return;
      void response.json().then(
        (body: unknown) => observer.#roster(rosterFromBody(body), "snapshot"),
        () => undefined,
      );
    };
    options.page.on("response", observer.#onResponse);
    return observer;
  }

  get participants(): readonly Participant[] {
    return this.#registry?.list() ?? [];
  }

  /** The bot is in the call: from now on what the page shows is the meeting. */
  admitted(clock: Clock): void {
    if (this.#clock || this.#stopped) return;
    this.#clock = clock;
    this.journal.append({ type: "clock", opened_at: clock.openedAt, admitted_at: clock.admittedAt, origin: clock.plannedOrigin, final: false });
    void this.journal.sync().catch(() => undefined);
    this.#registry = new ParticipantRegistry({
      selfName: this.selfName,
      admittedAt: clock.admittedAt,
      onChange: (p, change, at) => this.#participantChanged(p, change, at),
    });
    this.#fusion = new SpeechFusion(this.#registry);
    const pending = this.#pendingRoster;
    this.#pendingRoster = [];
    if (pending.length > 0) this.#registry.roster(pending, clock.admittedAt);
    this.#schedule();
    setTimeout(() => this.#unwatchResponses(), ROSTER_SNAPSHOT_MS).unref();
  }

  /** Drains every LIVE_DRAIN_MS instead of DRAIN_MS while `live()` says someone follows the events. */
  liveWhile(live: () => boolean): void {
    this.#live = live;
  }

  #schedule(): void {
    this.#timer = setTimeout(
      () => {
        this.#schedule();
        void this.#drainOnce();
      },
      this.#live() ? LIVE_DRAIN_MS : DRAIN_MS,
    );
    this.#timer.unref();
  }

  /**
   * Sampling and draining stopped until `resume()`: the bench's within-bot A/B (duty-cycle.ts).
   * What happens meanwhile is not observed (a turn spanning the pause ends at its last sample).
   */
  async pause(): Promise<void> {
    if (!this.#timer || this.#stopped) return;
    clearTimeout(this.#timer);
    this.#timer = null;
    await this.#evaluate(`window.${OBSERVER_GLOBAL} && window.${OBSERVER_GLOBAL}.pause()`);
  }

  async resume(): Promise<void> {
    if (this.#timer || this.#stopped || !this.#clock) return;
    await this.#evaluate(`window.${OBSERVER_GLOBAL} && window.${OBSERVER_GLOBAL}.resume()`);
    this.#schedule();
  }

  #unwatchResponses(): void {
    if (this.#onResponse) this.page.off("response", this.#onResponse);
    this.#onResponse = null;
  }

  /**
   * The call is over: a last look at the page, every open turn ended where it was last heard,
   * and everyone still there stays without `left_at`. Idempotent.
   */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    // A page stuck in an evaluate must not hold the way out (run.ts bounds the drive the same way).
    const bounded = (p: Promise<void> | null) => Promise.race([p, new Promise<void>((r) => setTimeout(r, STOP_DRAIN_MS).unref())]);
    await bounded(this.#draining);
    if (this.#clock && !this.page.isClosed()) await bounded(this.#drainOnce());
    this.#stopped = true;
    this.#unwatchResponses();
    const cdp = this.#cdp;
    this.#cdp = null;
    void cdp?.then((session) => session.detach()).catch(() => undefined);
    this.#tracker.closeAll();
    this.journal.append({ type: "alive", at: Date.now() });
    this.emit("settled", Number.POSITIVE_INFINITY);
  }

  /** Offset 0 as it is in the stored file (after the trim), then the journal is closed. */
  async finish(origin: number | null): Promise<void> {
    await this.stop();
    if (this.#clock && origin !== null) {
      this.journal.append({ type: "clock", opened_at: this.#clock.openedAt, admitted_at: this.#clock.admittedAt, origin, final: true });
    }
    await this.journal.close();
  }

  /** Seconds on the recording's clock (the planned origin: the trim lands there). */
  offsetOf(at: number): number | null {
    return this.#clock ? Math.round(Math.max(0, at - this.#clock.plannedOrigin) / 10) / 100 : null;
  }

  #watchSocket(ws: PwWebSocket): void {
    ws.on("framereceived", ({ payload }) => {
      // Cheap test first: most frames are not roster updates.
      if (!payload.includes("rosterUpdate")) return;
      this.#roster(rosterFromFrame(payload), "websocket");
    });
  }

  #roster(entries: RosterEntry[], signal: string): void {
    if (entries.length === 0 || this.#stopped) return;
    this.logger.debug({ signal, entries: entries.length }, "observe: roster update");
    if (!this.#registry) this.#pendingRoster.push(...entries);
    else this.#registry.roster(entries, Date.now());
  }

  #participantChanged(p: Participant, change: ParticipantChange, at: number): void {
    this.journal.append({ type: "participant", id: p.id, name: p.name, label: p.label, self: p.self, joined_at: p.joinedAt, left_at: p.leftAt });
    this.logger.info({ participant: p.id, change, self: p.self, joined_at: p.joinedAt, left_at: p.leftAt }, "observe: participant");
    this.emit("participant", {
      change,
      participant: { id: p.id, name: p.name, label: p.label, self: p.self },
      at,
      joinedLate: p.joinedAt !== null && !p.self,
    });
  }

  #drainOnce(): Promise<void> {
    this.#draining ??= this.#drain().finally(() => (this.#draining = null));
    return this.#draining;
  }

  /**
   * An expression evaluated in the page straight over CDP: Runtime.evaluate of the page's JSON
   * string costs a fraction of `page.evaluate` (no utility script walking the value in the page,
   * no protocol objects in the worker). Undefined when the page cannot answer (navigating,
   * closing: the next round tries again).
   */
  async #evaluate(expression: string): Promise<unknown> {
    try {
      this.#cdp ??= this.page.context().newCDPSession(this.page);
      const cdp = await this.#cdp;
      const answer = (await cdp.send("Runtime.evaluate", { expression, returnByValue: true })) as { result?: { value?: unknown } };
      return answer.result?.value;
    } catch {
      // A session that failed or lost its target is replaced on the next round.
      const failed = this.#cdp;
      this.#cdp = null;
      void failed?.then((session) => session.detach()).catch(() => undefined);
      return undefined;
    }
  }

  /** One `drain()` in the page; null when it could not answer. */
  async #evaluateDrain(): Promise<PageDrain | null> {
    const value = await this.#evaluate(DRAIN_EXPRESSION);
    return typeof value === "string" ? (JSON.parse(value) as PageDrain) : null;
  }

  async #drain(): Promise<void> {
    const registry = this.#registry;
    const fusion = this.#fusion;
    if (!registry || !fusion || this.#stopped || this.page.isClosed()) return;
    const drained = await this.#evaluateDrain();
    if (!drained || this.#stopped) return;
    const admittedAt = this.#clock?.admittedAt ?? 0;
    // Absent: the same as the last drain's, which the registry already holds.
    if (drained.view) {
      if (drained.view.call) registry.call(drained.view.call, drained.now);
      registry.people(drained.view.people, drained.now);
      registry.tiles(drained.view.tiles, drained.now);
    }
    for (const d of drained.dsh) fusion.dominant(d.t, d.history);
    for (const sample of drained.samples) {
      if (sample.t < admittedAt) continue;
      this.#tracker.update(sample.t, fusion.speakers(sample));
    }
    this.emit("settled", this.#tracker.settledThrough(drained.now));
    this.journal.append({ type: "alive", at: drained.now });
    if (drained.now - this.#lastSync >= SYNC_MS) {
      this.#lastSync = drained.now;
      await this.journal.sync().catch((err: unknown) => this.logger.warn({ err }, "observe: timeline journal sync failed"));
    }
  }
}
