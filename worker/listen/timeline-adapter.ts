/**
 * The adapter point between the participant timeline (issue #17, worker/observe/) and live
 * listeners. The timeline publishes on an in-worker event emitter; this subscribes to its event
 * names and hands each event, validated, to the listen hub. At the merge of #17 the session
 * calls `connectTimeline(observe.events, listen, logger)` once both exist (worker/session/run.ts).
 *
 * An emitted payload may carry its `type` or not (`emit("speech_started", {participant,
 * offset_seconds})`): the event name is the type. A payload that does not fit the listener's
 * event schema (shared/listen/events.ts) is dropped with a warning, never forwarded half-formed.
 */
import type { Logger } from "../../shared/log/logger.ts";
import type { ListenEvent, ListenEventSink } from "../../shared/listen/events.ts";
import { listenEventSchema } from "../../shared/listen/events.ts";

export const TIMELINE_EVENT_NAMES = ["speech_started", "speech_stopped", "participant_joined", "participant_left"] as const;

/** What the adapter needs of #17's emitter: Node's EventEmitter satisfies it. */
export interface TimelineEmitter {
  on(event: string, listener: (payload: unknown) => void): unknown;
  off(event: string, listener: (payload: unknown) => void): unknown;
}

/** Forwards the timeline's events to `sink`; returns the disconnect. */
export function connectTimeline(emitter: TimelineEmitter, sink: ListenEventSink, logger: Logger): () => void {
  const handlers = TIMELINE_EVENT_NAMES.map((name) => {
    const handler = (payload: unknown) => {
      const candidate = typeof payload === "object" && payload !== null ? { ...payload, type: name } : payload;
      const parsed = listenEventSchema.safeParse(candidate);
      if (!parsed.success) {
        logger.warn({ event: name }, "listen: a timeline event did not fit the listener schema; dropped");
        return;
      }
      sink.publish(parsed.data as ListenEvent);
    };
    emitter.on(name, handler);
    return { name, handler };
  });
  return () => {
    for (const { name, handler } of handlers) emitter.off(name, handler);
  };
}
