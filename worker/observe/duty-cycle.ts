/**
 * Bench only (bench/bot/observe-within.ts): the observation paused and resumed in turns, so that
 * one bot measures its own cost: the same browser, page and meeting with and without the sampler
 * and the drains, window after window. The turns fall on whole multiples of the period on the
 * wall clock, even ones observed and odd ones paused (`observedAt`), so the bench knows which
 * window is which without asking the worker. Off unless TOAMAISUTAA_OBSERVE_ALTERNATE_MSEC is
 * set (benchOverride: never a configuration key).
 */
import { benchOverride } from "../../shared/process/bench-override.ts";
import type { MeetingObserver } from "./observer.ts";

export const alternateMs = (env: NodeJS.ProcessEnv = process.env): number => benchOverride("TOAMAISUTAA_OBSERVE_ALTERNATE_MSEC", 0, env);

/** Whether the window holding `epochMs` is an observed one. */
export const observedAt = (epochMs: number, periodMs: number): boolean => Math.floor(epochMs / periodMs) % 2 === 0;

/** Pauses and resumes `observer` at each boundary from now on; the returned function ends it. */
export function startDutyCycle(observer: MeetingObserver, periodMs: number): () => void {
  let timer: NodeJS.Timeout | null = null;
  const turn = () => {
    const now = Date.now();
    void (observedAt(now, periodMs) ? observer.resume() : observer.pause());
    timer = setTimeout(turn, periodMs - (now % periodMs) + 1);
    timer.unref();
  };
  turn();
  return () => {
    if (timer) clearTimeout(timer);
    timer = null;
  };
}
