/**
 * Live audio out (issue #18, decisions.md "Additions"): `POST /audio/{id}/listen` hands out a
 * WebSocket URL with its own token; `DELETE /audio/{id}/listen/{token}` revokes it; the WebSocket
 * itself is upgrade.ts. Unlike the playback routes these work whether or not
 * MIC_PLAYBACK_ENABLED is on and whether or not the session records.
 */
import { z } from "zod";
import type { Logger } from "../../../shared/log/logger.ts";
import { listenOpenResultSchema } from "../../../shared/listen/ops.ts";
import { CLOSE, CLOSE_REASON, MAX_LISTENERS, SAMPLE_FORMAT, listenBodySchema, listenUrl } from "../../../shared/listen/protocol.ts";
import { AppError, fail } from "../../http/errors.ts";
import { mountRoute } from "../../http/route.ts";
import type { BotRouteDeps } from "../context.ts";
import type { SessionRunner } from "../supervisor/session-runner.ts";
import { ListenerRegistry } from "./registry.ts";
import { listenUpgrade } from "./upgrade.ts";
import { sessionOr404 } from "../routes/session-or-404.ts";

const IN_CALL = new Set(["recording", "connected"]);

const listenSchema = z.object({
  session_id: z.string(),
  listen_url: z.string(),
  token: z.string(),
  format: z.literal(SAMPLE_FORMAT),
  sample_rate: z.number().int(),
  channels: z.number().int(),
});
const closedSchema = z.object({ session_id: z.string(), status: z.literal("closed") });

const unknownListener = () => new AppError("not_found", { message: "Unknown or closed listener." });

export interface ListenFeature {
  /** Closes every listener (service shutdown). */
  close(): void;
}

export function listenRoutes(deps: BotRouteDeps, logger: Logger): ListenFeature {
  const { target, config, repo, supervisor, auth } = deps;
  const registry = new ListenerRegistry();
  const watched = new Set<string>();
  const common = { family: "bot", tag: "audio" } as const;
  const log = logger.child({ component: "listen" });
  const upgrade = listenUpgrade({
    registry,
    logger: log,
    sessionEnd: (id) => {
      const runner = supervisor.get(id);
      if (!runner) return { status: null };
      return runner.ended ? { status: runner.finalStatus } : null;
    },
  });
  deps.upgrades?.add(upgrade.handler);

  /** Every token of a session dies with it, and its sockets close with 1000. */
  const watch = (runner: SessionRunner) => {
    if (watched.has(runner.id)) return;
    watched.add(runner.id);
    void runner.done.then(() => {
      watched.delete(runner.id);
      registry.closeSession(runner.id, CLOSE.normal, CLOSE_REASON.sessionEnded, runner.finalStatus);
    });
  };

  const runningInCall = async (id: string): Promise<SessionRunner> => {
    const row = await sessionOr404(repo, id);
    const runner = supervisor.get(id);
    const status = runner?.status ?? row.status;
    if (!runner || runner.ended || !IN_CALL.has(status)) throw fail.conflict(`The bot is not in the call (status ${status}).`);
    return runner;
  };

  mountRoute(target, {
    ...common,
    method: "post",
    path: "/audio/:session_id/listen",
    summary: `Listen to the meeting live: a WebSocket URL of 20 ms s16le PCM frames and JSON event frames (up to ${MAX_LISTENERS} per session)`,
    security: "botToken",
    before: [auth],
    body: listenBodySchema,
    responses: {
      200: { description: "the WebSocket URL and its token", schema: listenSchema },
      401: { description: "missing or wrong BOT_ACCESS_TOKEN" },
      404: { description: "unknown session" },
      409: { description: `the bot is not in the call, or the session has ${MAX_LISTENERS} listeners` },
      422: { description: "invalid body" },
    },
    handler: async ({ params, body, req, res }) => {
      const id = params.session_id ?? "";
      const runner = await runningInCall(id);
      if (!registry.reserve(id)) throw fail.conflict(`This session already has ${MAX_LISTENERS} listeners; DELETE one first.`);
      let token: string;
      try {
        const response = await runner.request("listen_open", {});
        if (!response.ok) {
          const status = response.error?.status ?? 500;
          if (status === 409) throw fail.conflict(response.error?.message ?? "The bot is not in the call.");
          throw new AppError("internal", { cause: new Error(response.error?.message ?? "listen_open failed") });
        }
        const { socketPath } = listenOpenResultSchema.parse(response.result);
        ({ token } = registry.open(id, { format: { sampleRate: body.sample_rate, channels: body.channels }, events: body.events, socketPath }));
      } catch (err) {
        registry.release(id);
        throw err;
      }
      watch(runner);
      // The session may have ended while the worker answered: its tokens must not outlive it.
      if (runner.ended) registry.closeSession(id, CLOSE.normal, CLOSE_REASON.sessionEnded);
      const base = config.bot.PUBLIC_BASE_URL ?? `${req.protocol}://${req.get("host") ?? "localhost"}`;
      res.json({ session_id: id, listen_url: listenUrl(base, id, token), token, format: SAMPLE_FORMAT, sample_rate: body.sample_rate, channels: body.channels });
    },
  });

  mountRoute(target, {
    ...common,
    method: "delete",
    path: "/audio/:session_id/listen/:token",
    summary: "Revoke a listener: its URL stops working and its WebSocket closes with 1000",
    security: "botToken",
    before: [auth],
    responses: { 200: { description: "closed", schema: closedSchema }, 401: { description: "missing or wrong BOT_ACCESS_TOKEN" }, 404: { description: "unknown session, or unknown or closed listener" } },
    handler: async ({ params, res }) => {
      const id = params.session_id ?? "";
      await sessionOr404(repo, id);
      const listener = registry.match(id, params.token ?? "");
      if (!listener) throw unknownListener();
      registry.revoke(listener, CLOSE.normal, CLOSE_REASON.revoked);
      res.json({ session_id: id, status: "closed" });
    },
  });

  mountRoute(target, {
    ...common,
    method: "get",
    path: "/audio/:session_id/listen/:token",
    summary: "The listener's WebSocket (Upgrade: websocket); the token in the path is the credential. Binary frames: 20 ms of s16le PCM; text frames: JSON events",
    responses: {
      101: { description: "switching to the WebSocket" },
      404: { description: "unknown or closed listener (refused before the upgrade)" },
      409: { description: "this listener is already connected" },
      426: { description: "a plain GET without the WebSocket upgrade" },
    },
    handler: ({ params }) => {
      if (!registry.match(params.session_id ?? "", params.token ?? "")) throw unknownListener();
      throw new AppError("upgrade_required", { headers: { Upgrade: "websocket" } });
    },
  });

  return {
    close() {
      registry.closeAll(CLOSE.goingAway, CLOSE_REASON.shutdown);
      upgrade.close();
    },
  };
}
