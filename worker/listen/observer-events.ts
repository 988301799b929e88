/**
 * The meeting observer's events (worker/observe/, issue #17) in the listener's words: a speech
 * turn's start and end, a participant joining or leaving, each with `offset_seconds` on the
 * recording's clock. Speech nobody can be tied to stays in the timeline file (participant_id
 * null) but is not announced to listeners: their event names a participant.
 */
import type { Logger } from "../../shared/log/logger.ts";
import type { ListenEventSink } from "../../shared/listen/events.ts";
import type { MeetingObserver } from "../observe/observer.ts";
import { listenEventSchema } from "../../shared/listen/events.ts";

/** Forwards `observer`'s speech and participant events to `sink`; returns the disconnect. */
export function connectObserver(observer: MeetingObserver, sink: ListenEventSink, logger: Logger): () => void {
  const publish = (candidate: unknown): void => {
    const parsed = listenEventSchema.safeParse(candidate);
    if (parsed.success) sink.publish(parsed.data);
    else logger.warn("listen: an observer event did not fit the listener schema; dropped");
  };
  const nameOf = (id: string): string | null => observer.participants.find((p) => p.id === id)?.name ?? null;
  const onSpeech = (e: { kind: "start" | "end"; participantId: string | null; at: number }): void => {
    const offset = observer.offsetOf(e.at);
    const name = e.participantId === null ? null : nameOf(e.participantId);
    if (offset === null || e.participantId === null || name === null) return;
    publish({ type: e.kind === "start" ? "speech_started" : "speech_stopped", participant: { id: e.participantId, name }, offset_seconds: offset });
  };
  const onParticipant = (e: { change: string; participant: { id: string; name: string; label: string | null; self: boolean }; at: number }): void => {
    if (e.change !== "joined" && e.change !== "left") return;
    const offset = observer.offsetOf(e.at);
    if (offset === null) return;
    const { id, name, label, self } = e.participant;
    publish({ type: e.change === "joined" ? "participant_joined" : "participant_left", participant: { id, name, label, self }, offset_seconds: offset });
  };
  observer.on("speech", onSpeech);
  observer.on("participant", onParticipant);
  return () => {
    observer.off("speech", onSpeech);
    observer.off("participant", onParticipant);
  };
}
