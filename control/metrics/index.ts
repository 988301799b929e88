/**
 * The hooks the event sites call: one line each where the event happens, so the counting lives
 * here and the sites stay readable. Labels are closed sets (statuses, reasons, backends), never
 * ids, so the number of series stays bounded.
 */
import { auth, bot, storage, webhooks } from "./registry.ts";

export { addBotSource, addOutboxSource } from "./sources.ts";

export const metrics = {
  login(result: "success" | "challenge" | "refused", reason = ""): void {
    auth.logins.inc({ result, reason });
  },
  refresh(result: "success" | "refused", reason = ""): void {
    auth.refreshes.inc({ result, reason });
  },
  lockout(kind: "password" | "second_factor"): void {
    auth.lockouts.inc({ kind });
  },
  rateLimited(): void {
    auth.rateLimited.inc();
  },

  joined(): void {
    bot.joins.inc();
  },
  joinRefused(): void {
    bot.refusedJoins.inc();
  },
  /** A session's status changed; `createdAt` is the /join, `lobbyAt` when it reached the lobby. */
  sessionStatus(status: string, at: Date, times: { createdAt: Date; lobbyAt: Date | null }): void {
    const since = (from: Date): number => Math.max(0, (at.getTime() - from.getTime()) / 1000);
    if (status === "lobby") bot.joinToLobby.observe(since(times.createdAt));
    if (status === "recording" || status === "connected") {
      bot.joinToAdmitted.observe(since(times.createdAt));
      if (times.lobbyAt) bot.lobbyToAdmitted.observe(since(times.lobbyAt));
    }
  },
  sessionFinished(outcome: { status: string; endReason: string; errorCode: string | null; createdAt: Date | null; endedAt: Date }): void {
    bot.finished.inc({ status: outcome.status, end_reason: outcome.endReason, error_code: outcome.errorCode ?? "" });
    if (outcome.createdAt) bot.duration.observe(Math.max(0, (outcome.endedAt.getTime() - outcome.createdAt.getTime()) / 1000));
  },
  /** The recording lost `seconds` of meeting audio to a playback underrun (worker/audio/gaps.ts). */
  audioGap(seconds: number): void {
    bot.audioGaps.inc();
    bot.audioGapSeconds.inc(seconds);
  },

  webhookAttempt(result: "delivered" | "failed"): void {
    webhooks.deliveries.inc({ result });
  },
  webhookDeadLetter(): void {
    webhooks.deadLetters.inc();
  },

  upload(backend: string, result: "stored" | "failed"): void {
    storage.uploads.inc({ backend, result });
  },
  uploadRetry(backend: string): void {
    storage.retries.inc({ backend });
  },
};
