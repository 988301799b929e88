/**
 * The meeting observer's events (worker/observe/, issue #17) in the listener's words: a speech
 * turn's start and end, a participant joining or leaving, each with `offset_seconds` on the
 * recording's clock. Speech nobody can be tied to stays in the timeline file (participant_id
 * null) but is not announced to listeners: their event names a participant.
 *
 * As in the webhooks of #17, `participant_joined` and `participant_left` tell of changes during
 * the session: the bot itself and those already there when it came in are in the timeline
 * (joined_at null), not announced as joining.
 *
 * Listeners get the events in the order they happened (`offset_seconds` never goes back): a
 * turn's end is known only a debounce after it, and a roster update can tell of a leave before
 * the samples of a turn that ended just before it are read, so events wait until the observer
 * says that nothing earlier can come (`settled`, at most a drain of the page later; the observer
 * drains twice as often while a listener is connected).
 */
import type { Logger } from "../../shared/log/logger.ts";
import type { ListenEventSink } from "../../shared/listen/events.ts";
import type { MeetingObserver, ParticipantEvent, SpeechEvent } from "../observe/observer.ts";
import { listenEventSchema } from "../../shared/listen/events.ts";

interface Held {
  /** Epoch ms of what it tells. */
  at: number;
  event: unknown;
}

/** Forwards `observer`'s speech and participant events to `sink`; returns the disconnect. */
export function connectObserver(observer: MeetingObserver, sink: ListenEventSink, logger: Logger): () => void {
  const publish = (candidate: unknown): void => {
    const parsed = listenEventSchema.safeParse(candidate);
    if (parsed.success) sink.publish(parsed.data);
    else logger.warn("listen: an observer event did not fit the listener schema; dropped");
  };
  let held: Held[] = [];
  const hold = (at: number, event: unknown): void => void held.push({ at, event });
  const nameOf = (id: string): string | null => observer.participants.find((p) => p.id === id)?.name ?? null;
  const onSpeech = (e: SpeechEvent): void => {
    const offset = observer.offsetOf(e.at);
    const name = e.participantId === null ? null : nameOf(e.participantId);
    if (offset === null || e.participantId === null || name === null) return;
    hold(e.at, { type: e.kind === "start" ? "speech_started" : "speech_stopped", participant: { id: e.participantId, name }, offset_seconds: offset });
  };
  const onParticipant = (e: ParticipantEvent): void => {
    if (e.participant.self || (e.change === "joined" && !e.joinedLate) || (e.change !== "joined" && e.change !== "left")) return;
    const offset = observer.offsetOf(e.at);
    if (offset === null) return;
    const { id, name, label, self } = e.participant;
    hold(e.at, { type: e.change === "joined" ? "participant_joined" : "participant_left", participant: { id, name, label, self }, offset_seconds: offset });
  };
  const onSettled = (through: number): void => {
    const due = held.filter((h) => h.at <= through);
    if (due.length === 0) return;
    held = held.filter((h) => h.at > through);
    // Stable: events of one instant keep the order they were emitted in.
    for (const h of due.sort((a, b) => a.at - b.at)) publish(h.event);
  };
  observer.on("speech", onSpeech);
  observer.on("participant", onParticipant);
  observer.on("settled", onSettled);
  observer.liveWhile(() => sink.listening === true);
  return () => {
    observer.liveWhile(() => false);
    observer.off("speech", onSpeech);
    observer.off("participant", onParticipant);
    observer.off("settled", onSettled);
  };
}
