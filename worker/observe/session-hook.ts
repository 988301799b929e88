/**
 * The observer's place in a worker session (worker/session/run.ts): attached before the join,
 * told of the admission, stopped before the bot leaves (leaving empties the page, which is not
 * everyone leaving), finished once the recording is trimmed and offset 0 is final. Observation is
 * best effort: if it cannot start, the session records as before, without a timeline.
 */
import { dirname, join } from "node:path";
import type { Page } from "playwright-core";
import type { InitMessage } from "../../shared/ipc/messages.ts";
import type { Logger } from "../../shared/log/logger.ts";
import { TIMELINE_JOURNAL_NAME } from "../../shared/timeline/index.ts";
import type { Channel } from "../session/channel.ts";
import { trimOffsetFor } from "../../shared/recording/index.ts";
import { alternateMs, startDutyCycle } from "./duty-cycle.ts";
import { MeetingObserver } from "./observer.ts";

/** How long a newcomer's webhook waits for the DOM's decorations of the name (tiles poll every 0.5 s). */
const LABEL_SETTLE_MS = 1_500;

export interface Observation {
  /** The in-worker event source (issue #18 listens here); null when observation failed to start. */
  readonly observer: MeetingObserver | null;
  admitted(admittedAt: number): void;
  stop(): Promise<void>;
  /** Resolves once every participant event has gone to the supervisor. */
  flushed(): Promise<void>;
  /** `firstSampleAt`: the stored file's first sample; null without a file (offset 0 = admission). */
  finish(firstSampleAt: number | null): Promise<void>;
}

export async function startObservation(options: { init: InitMessage; page: Page; recordingOpenedAt: number | null; channel: Channel; logger: Logger }): Promise<Observation> {
  const { init, page, channel, logger } = options;
  const journalPath = init.timelinePath ?? join(dirname(init.recordingPath), TIMELINE_JOURNAL_NAME);
  let observer: MeetingObserver | null = null;
  try {
    if (init.observe !== false) observer = await MeetingObserver.attach({ page, journalPath, selfName: init.displayName, logger });
  } catch (err) {
    logger.warn({ err }, "observe: could not start; this session gets no speaker timeline");
  }
  let admittedAt: number | null = null;
  let endDutyCycle: (() => void) | null = null;
  // One queue, so the webhooks keep the order of what happened.
  let queue: Promise<unknown> = Promise.resolve();
  observer?.on("participant", (e) => {
    if (e.participant.self) return;
    // Webhooks tell of changes during the session: those already there when the bot came in
    // are in the timeline (joined_at null), not announced as joining.
    if (e.change === "joined" && !e.joinedLate) return;
    if (e.change === "updated") return;
    const at = new Date(e.at).toISOString();
    const offsetSeconds = observer?.offsetOf(e.at) ?? null;
    queue = queue.then(async () => {
      // The roster names a newcomer first; the tiles and the People pane add the decorations
      // ("External", "Guest") a moment later. The webhook carries what is known by then.
      if (e.change === "joined") await new Promise((r) => setTimeout(r, LABEL_SETTLE_MS));
      const now = observer?.participants.find((p) => p.id === e.participant.id);
      await channel.send({
        type: "participantEvent",
        event: e.change === "joined" ? "joined" : "left",
        participant: { id: e.participant.id, name: now?.name ?? e.participant.name, label: now?.label ?? e.participant.label },
        offsetSeconds,
        at,
      });
    });
  });
  return {
    observer,
    admitted(at) {
      admittedAt = at;
      const openedAt = init.record ? (options.recordingOpenedAt ?? at) : null;
      // Where the recording will be cut (shared/recording/trim.ts, the same rule on every path).
      const plannedOrigin = openedAt === null ? at : openedAt + trimOffsetFor((at - openedAt) / 1000) * 1000;
      observer?.admitted({ openedAt, admittedAt: at, plannedOrigin });
      const period = alternateMs();
      if (observer && period > 0) endDutyCycle = startDutyCycle(observer, period);
    },
    flushed: async () => void (await queue.catch(() => undefined)),
    stop: async () => {
      endDutyCycle?.();
      await observer?.stop().catch((err: unknown) => logger.warn({ err }, "observe: stop failed"));
    },
    async finish(firstSampleAt) {
      await observer?.finish(firstSampleAt ?? admittedAt).catch((err: unknown) => logger.warn({ err }, "observe: finish failed"));
    },
  };
}
